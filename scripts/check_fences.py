"""Fail when code outside a library's fence module touches that library's private surface.

Some libraries we build on are reached below their public API (python-statemachine's engine,
Textual's frame hooks). Each such library gets ONE fence module that may do so; `FENCES` maps
the library to it. Anywhere else in the package, this check reports (file:line, the name):

1. an import of a non-public module of the library (`from textual import _ansi_sequences`,
   `from statemachine.engines.async_ import AsyncEngine`) or of a private name from it
   (`from statemachine.x import _y`). A module is public when the fence lists it in
   `public_modules`, or, when it lists none, when no part of its dotted path starts with `_`
   (Textual's convention; python-statemachine has no such convention, so its documented
   modules are listed);
2. a definition that overrides a private name of the library: a method or class attribute
   `_x` in a class derived (directly, or through our own classes) from one of the library's
   classes, when `_x` is one of those library classes' private names (`def _size_updated`,
   `def _get_engine`);
3. an attribute access `obj._x` (read, write or call) where `_x` is a private name of the
   library and `obj` is plausibly the library's: `self`/`cls` in a class derived from a library
   class when one of those library classes has `_x` (`self._engine`, `self._size`); any other
   receiver when the library defines `_x` anywhere and our package does not define `_x` on
   one of its own (not library-derived) classes or modules (`app._batch_count`,
   `super()._get_args_kwargs`, `InvokeManager._resolve_handler`), or `obj` is an attribute
   the library class has (`self.sm._callbacks` in an engine subclass); only in a module that
   imports the library (code that holds a library's object imports it, if only for its type),
   and never on a module of another library (`os._exit`).
   The exceptions keep our own private attributes legal when a library happens to use the
   same name; without types the check cannot tell whose object a bare `x._y` is then.

A library's private names come from its installed source (every `_x` it defines at module or
class level or stores as an attribute, and its private module names) and from introspecting its
classes (their `dir()` and the attributes their methods store on `self`), so the check follows
upgrades. Private means one leading underscore; dunders are not private.

Run: `python scripts/check_fences.py` (exit status 1 and one line per finding when any).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import sys
import textwrap
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path


@dataclass(frozen=True)
class Fence:
    """The one module of ours allowed to touch `library`'s private surface."""

    module: str
    # The library's public modules when it has no underscore convention (exact names).
    public_modules: tuple[str, ...] | None = None


FENCES: dict[str, Fence] = {
    "statemachine": Fence(
        "tui_agent.kernel._statemachine_engine",
        # The modules python-statemachine's documentation imports from.
        public_modules=(
            "statemachine",
            "statemachine.exceptions",
            "statemachine.mixins",
            "statemachine.contrib.diagram",
        ),
    ),
    # Textual marks private modules and names with a leading underscore.
    "textual": Fence("tui_agent.ui._textual_hooks"),
    # textual-serve keeps the same convention, and so does pydantic.
    "pydantic": Fence("tui_agent._pydantic_hooks"),
    "textual_serve": Fence("tui_agent.serve._textual_serve_hooks"),
}


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    name: str
    library: str
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.name} ({self.library}): {self.what}"


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name != "_"


def is_public_module(module: str, fence: Fence) -> bool:
    if fence.public_modules is not None:
        return module in fence.public_modules
    return not any(part.startswith("_") for part in module.split("."))


# -- what a library defines -------------------------------------------------------------------


def _defined_names(tree: ast.Module) -> Iterator[str]:
    """Names a module defines at module or class level, and attributes it stores anywhere."""

    def level(body: list[ast.stmt]) -> Iterator[str]:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield node.name
            elif isinstance(node, ast.ClassDef):
                yield node.name
                yield from level(node.body)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    yield from (n.id for n in ast.walk(target) if isinstance(n, ast.Name))

    yield from level(tree.body)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            yield node.attr


@cache
def library_privates(library: str) -> frozenset[str]:
    """Every private name `library`'s installed source defines, module names included."""
    spec = importlib.util.find_spec(library)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"check_fences: {library} is not installed as a package")
    names: set[str] = set()
    for location in spec.submodule_search_locations:
        for path in Path(location).rglob("*.py"):
            names.update(p for p in (path.stem, path.parent.name) if is_private(p))
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names.update(n for n in _defined_names(tree) if is_private(n))
    return frozenset(names)


def _import_attr(qualname: str) -> object | None:
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            found = getattr(found, part, None)
            if found is None:
                return None
        return found
    return None


@cache
def class_attributes(qualname: str) -> frozenset[str]:
    """The attribute names instances of a library class have: its MRO's class attributes and
    the attributes its (and its bases') methods store on `self`."""
    klass = _import_attr(qualname)
    if not isinstance(klass, type):
        return frozenset()
    names = set(dir(klass))
    for base in klass.__mro__:
        names |= _stored_on_self(base)
    return frozenset(names)


@cache
def _stored_on_self(klass: type) -> frozenset[str]:
    """The attributes `klass`'s own methods store on `self`. Cached per class: the library's
    classes share their bases (Textual's `Widget`, `DOMNode`, `MessagePump`), and reading a
    class's source parses its whole module."""
    try:
        source = textwrap.dedent(inspect.getsource(klass))
    except (OSError, TypeError):
        return frozenset()  # builtins and C classes store nothing we could read
    return frozenset(
        node.attr
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


# -- what our package defines -----------------------------------------------------------------


@dataclass
class _Module:
    name: str
    path: Path
    tree: ast.Module
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    # Module-level `Name = other.Name` (also under `if TYPE_CHECKING:`): a base class alias.
    aliases: dict[str, list[str]] = field(default_factory=dict)


def _package_of(module: _Module) -> str:
    return module.name if module.path.name == "__init__.py" else module.name.rpartition(".")[0]


def _aliases(module: _Module, body: list[ast.stmt]) -> None:
    for node in body:
        if isinstance(node, ast.If):
            _aliases(module, node.body + node.orelse)
        elif isinstance(node, ast.Assign) and (dotted := _dotted(node.value)) is not None:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    module.aliases.setdefault(target.id, []).append(dotted)


def _imports(module: _Module) -> None:
    package = _package_of(module)
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                module.imports[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, package)
            for alias in node.names:
                module.imports[alias.asname or alias.name] = f"{source}.{alias.name}"


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = ".".join(parts[: len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Subscript):  # `StateChart[Any]`
        return _dotted(node.value)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


class Package:
    """Our modules, their classes' bases resolved, and the private names we define."""

    def __init__(self, root: Path) -> None:
        self.modules: dict[str, _Module] = {}
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root.parent).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            module = _Module(name, path, ast.parse(path.read_text(encoding="utf-8"), str(path)))
            _imports(module)
            _aliases(module, module.tree.body)
            self.modules[name] = module
        self.classes: dict[str, tuple[_Module, ast.ClassDef]] = {
            f"{module.name}.{node.name}": (module, node)
            for module in self.modules.values()
            for node in module.tree.body
            if isinstance(node, ast.ClassDef)
        }

    def resolve(self, module: _Module, dotted: str, depth: int = 0) -> str:
        """A name as used in `module`, fully qualified (through our re-exports too)."""
        head, _, rest = dotted.partition(".")
        if head in module.imports:
            qualname = module.imports[head] + (f".{rest}" if rest else "")
        else:
            qualname = f"{module.name}.{dotted}"
        owner, _, name = qualname.rpartition(".")
        if qualname not in self.classes and owner in self.modules and depth < 5:
            target = self.modules[owner]
            if name in target.imports:
                return self.resolve(target, name, depth + 1)
        return qualname

    @cache  # noqa: B019 (one Package per run)
    def library_bases(self, qualname: str) -> frozenset[str]:
        """The library classes a class of ours derives from, directly or through ours."""
        module, node = self.classes[qualname]
        return frozenset(
            base
            for dotted in filter(None, map(_dotted, node.bases))
            for base in self._library_classes(module, dotted)
        )

    def _library_classes(self, module: _Module, dotted: str, depth: int = 0) -> Iterator[str]:
        resolved = self.resolve(module, dotted)
        owner, _, name = resolved.rpartition(".")
        if resolved in self.classes:
            yield from self.library_bases(resolved)
        elif owner in self.modules and name in self.modules[owner].aliases and depth < 5:
            for alias in self.modules[owner].aliases[name]:
                yield from self._library_classes(self.modules[owner], alias, depth + 1)
        elif _top(resolved) != _top(module.name):
            yield resolved

    def own_privates(self, libraries: Mapping[str, Fence]) -> frozenset[str]:
        """Private names our own (not library-derived) classes and our modules define."""
        names: set[str] = set()
        for module in self.modules.values():
            for node in module.tree.body:
                if isinstance(node, ast.ClassDef):
                    bases = self.library_bases(f"{module.name}.{node.name}")
                    if any(_top(base) in libraries for base in bases):
                        continue
                    names.update(_defined_names(ast.Module(body=[node], type_ignores=[])))
                else:
                    names.update(_defined_names(ast.Module(body=[node], type_ignores=[])))
        return frozenset(n for n in names if is_private(n))


def _top(qualname: str) -> str:
    return qualname.split(".")[0]


# -- the check --------------------------------------------------------------------------------


def check(root: Path, fences: Mapping[str, Fence] = FENCES) -> list[Finding]:
    package = Package(root)
    ours = package.own_privates(fences)
    findings: list[Finding] = []
    for module in package.modules.values():
        allowed = {lib for lib, fence in fences.items() if fence.module == module.name}
        active = {lib: fence for lib, fence in fences.items() if lib not in allowed}
        if active:
            findings += _Visitor(package, module, active, ours).run()
    return sorted(findings)


@dataclass(frozen=True)
class _Scope:
    """A class body or a function: whether it is a class, the name its methods' instance goes
    by, and the private names of the library classes the enclosing class derives from."""

    is_class: bool
    self_name: str | None
    attributes: Mapping[str, frozenset[str]]


class _Visitor(ast.NodeVisitor):
    def __init__(
        self, package: Package, module: _Module, fences: Mapping[str, Fence], ours: frozenset[str]
    ) -> None:
        self.package = package
        self.module = module
        self.fences = fences
        self.ours = ours
        self.findings: list[Finding] = []
        self.scopes: list[_Scope] = [_Scope(False, None, {})]
        self.imported = {_top(name) for name in module.imports.values()}

    def run(self) -> list[Finding]:
        self.visit(self.module.tree)
        return self.findings

    def report(self, node: ast.AST, name: str, library: str, what: str) -> None:
        line = getattr(node, "lineno", 0)
        self.findings.append(Finding(str(self.module.path), line, name, library, what))

    # imports

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._module_import(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = _absolute(node, _package_of(self.module))
        library = _top(source)
        if library not in self.fences:
            return
        if not self._module_import(node, source):
            for alias in node.names:
                if is_private(alias.name):
                    self.report(node, alias.name, library, f"imports a private name of {source}")

    def _module_import(self, node: ast.AST, module: str) -> bool:
        library = _top(module)
        fence = self.fences.get(library)
        if fence is None or is_public_module(module, fence):
            return False
        self.report(node, module, library, "imports a non-public module")
        return True

    # classes and overrides

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        qualname = f"{self.module.name}.{node.name}"
        bases: dict[str, set[str]] = {}
        if qualname in self.package.classes:
            for base in self.package.library_bases(qualname):
                if _top(base) in self.fences:
                    bases.setdefault(_top(base), set()).update(class_attributes(base))
        attributes = {lib: frozenset(names) for lib, names in bases.items()}
        for statement in node.body:
            for name in filter(is_private, _statement_names(statement)):
                for library, names in attributes.items():
                    if name in names:
                        self.report(statement, name, library, "overrides a private name")
        self.scopes.append(_Scope(True, None, attributes))
        self.generic_visit(node)
        self.scopes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer = self.scopes[-1]
        if outer.is_class:  # a method: its first parameter is the instance (or the class)
            args = node.args.posonlyargs + node.args.args
            scope = _Scope(False, args[0].arg if args else None, outer.attributes)
        else:  # a nested function sees the enclosing method's instance
            scope = outer
        self.scopes.append(scope)
        self.generic_visit(node)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    # attribute access

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.generic_visit(node)
        name = node.attr
        if not is_private(name):
            return
        scope = self.scopes[-1]
        receiver = node.value
        if isinstance(receiver, ast.Name) and receiver.id == scope.self_name:
            for library, names in scope.attributes.items():
                if name in names:
                    self.report(node, name, library, "uses a private attribute it inherits")
            return
        imported = isinstance(receiver, ast.Name) and self.module.imports.get(receiver.id)
        if imported and _top(imported) not in self.fences:
            return  # `os._exit`: a module of another library or of the standard one
        for library in self.fences:
            if library not in self.imported or name not in library_privates(library):
                continue
            if name not in self.ours or self._library_owned(receiver, scope, library):
                self.report(node, name, library, "uses a private name of the library")

    def _library_owned(self, receiver: ast.expr, scope: _Scope, library: str) -> bool:
        """`self.sm` in a class derived from the library, `sm` being an attribute the library
        class has: the object is the library's even when we use the private name too."""
        return (
            isinstance(receiver, ast.Attribute)
            and isinstance(receiver.value, ast.Name)
            and receiver.value.id == scope.self_name
            and receiver.attr in scope.attributes.get(library, frozenset())
        )


def _statement_names(statement: ast.stmt) -> Iterator[str]:
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        yield statement.name
    elif isinstance(statement, ast.Assign | ast.AnnAssign):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        for target in targets:
            if isinstance(target, ast.Name):
                yield target.id


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else Path(__file__).resolve().parent.parent / "tui_agent"
    findings = check(root)
    for finding in findings:
        print(finding)
    if findings:
        fenced = ", ".join(f"{lib} -> {fence.module}" for lib, fence in FENCES.items())
        print(f"{len(findings)} private name(s) used outside their fence ({fenced})")
    return 1 if findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
