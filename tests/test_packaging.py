"""What pyproject.toml promises: every third-party package the code imports is a declared
dependency (not one that happens to come along with another), a package whose private modules
the code imports is bounded above, and the tested set in constraints.txt satisfies the bounds
(the versions pinned there are the ones installed by `make`)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Mapping
from functools import cache
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
_REQUIREMENT = re.compile(r"([A-Za-z0-9._-]+)(?:\[[^]]*\])?\s*(.*)")


def _name(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def _declared() -> dict[str, str]:
    """Each runtime dependency's normalised name and its version specifier."""
    found: dict[str, str] = {}
    for requirement in PROJECT["dependencies"]:
        match = _REQUIREMENT.fullmatch(requirement.strip())
        assert match is not None, requirement
        found[_name(match[1])] = match[2].replace(" ", "")
    return found


@cache  # two tests ask; parsing the whole package once is enough
def _imports() -> dict[str, set[str]]:
    """Each third-party module the package imports, by top-level name."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / "tui_agent").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top != "tui_agent" and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(name)
    return found


@cache  # it reads every installed distribution's file list: once, not once per import
def _packages() -> Mapping[str, list[str]]:
    return metadata.packages_distributions()


def _distributions(top: str) -> set[str]:
    return {_name(d) for d in _packages().get(top, [])}


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def _satisfies(version: str, specifier: str) -> bool:
    """Enough of PEP 440 for the `>=`, `<` and `==` bounds pyproject.toml uses."""
    have = _version_tuple(version)
    for clause in filter(None, specifier.split(",")):
        match = re.fullmatch(r"(>=|<|==)(.+)", clause)
        assert match is not None, clause
        operator, want = match[1], _version_tuple(match[2])
        if not {">=": have >= want, "<": have < want, "==": have == want}[operator]:
            return False
    return True


def _pinned() -> dict[str, str]:
    text = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    pins = (line.split("==") for line in text.splitlines() if "==" in line)
    return {_name(name): version.strip() for name, version in pins}


def test_every_imported_package_is_declared() -> None:
    declared = _declared()
    undeclared = {
        top: sorted(_distributions(top))
        for top in _imports()
        if not _distributions(top) & declared.keys()
    }
    assert undeclared == {}


def test_a_package_whose_private_modules_are_imported_has_an_upper_bound() -> None:
    declared = _declared()
    private = {
        name
        for names in _imports().values()
        for name in names
        if any(part.startswith("_") for part in name.split(".")[1:])
    }
    assert private, "nothing private is imported any more: this test can go"
    for name in private:
        (distribution,) = _distributions(name.partition(".")[0]) & declared.keys()
        assert "<" in declared[distribution], f"{name} is private; bound {distribution} above"


def test_the_pinned_versions_satisfy_the_declared_ranges() -> None:
    pinned = _pinned()
    wrong = {
        name: (specifier, pinned.get(name))
        for name, specifier in _declared().items()
        if name not in pinned or not _satisfies(pinned[name], specifier)
    }
    assert wrong == {}
