"""`dataclass`, built when first used instead of when its module loads.

`dataclasses.dataclass` writes each generated method (`__init__`, `__repr__`, `__eq__`,
`__hash__`, a frozen class's `__setattr__` and `__delattr__`) as source text and compiles it
with `exec`: on Python 3.11, about 3.7 M instructions for a frozen class. A one-shot loads some
130 of ours and instantiates fewer than half: the events, records and results of paths it never
takes. This decorator takes the same options and leaves the class as written, with stand-ins for
what only a built dataclass has; the first of them touched builds it, with the standard
decorator, in place:

- `__init__`: making an instance, of the class or of a subclass, builds every waiting class
  along its bases first, then runs the generated `__init__`;
- `__init_subclass__`: a plain subclass that brings its own `__init__` (which might never call
  this one) builds the class when it is defined;
- `__dataclass_fields__` and `__dataclass_params__`: `dataclasses.fields`, `is_dataclass` and
  libraries that look for them (pydantic, a subclass's own `dataclass`) build it;
- `__match_args__`: a positional `case` pattern builds it.

A class that defines any of these itself, or asks for `slots=True` (which makes a new class and so
cannot be done in place), is built at once. An error the standard decorator raises (a field
without a default after one with, a non-frozen subclass of a frozen class) is raised when the
class is first used rather than at import, and a waiting class's `__doc__` is None until it is
built. An instance made without `__init__` (`object.__new__`, unpickling in a fresh process)
would miss the generated methods: nothing here does that. Threads are safe: one builds, and a
thread making an instance meanwhile waits for it (see `_build`).

For the type checker this is `dataclasses.dataclass` itself.
"""

from __future__ import annotations

import dataclasses
import inspect
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

_T = TypeVar("_T")

# The options a class waits to be built with; present in a class's own namespace until then.
_WAITING = "__dataclass_waiting__"
_READ_STAND_INS = ("__dataclass_fields__", "__dataclass_params__", "__match_args__")
_STAND_INS = ("__init__", "__init_subclass__", *_READ_STAND_INS)
# Held while a class builds: its bases build inside, so the lock is re-entered.
_building = threading.RLock()
# Every class made to wait, in the order defined (those built since stay: `_build` skips them).
_made_to_wait: list[type] = []


def _build(cls: type) -> None:
    """Build `cls` (after its waiting bases) with the standard decorator, once.

    Each stand-in stays until what it stands for replaces it in one assignment, so a thread
    that reaches one meanwhile waits for this build. The decorator writes the fields and
    parameters over theirs; it keeps an `__init__` or `__match_args__` a class has, so the
    class is built without them, and both come from a subclass built with only those (the
    generated `__init__` refers to no class; a frozen class's subclass also compiles a
    `__setattr__` and `__delattr__`)."""
    with _building:
        options = cls.__dict__.get(_WAITING)
        if options is None:
            return
        for base in reversed(cls.__mro__[1:]):
            _build(base)
        delattr(cls, _WAITING)
        delattr(cls, "__init_subclass__")
        written_doc = cls.__doc__
        cls.__doc__ = "(written below)"  # spares the decorator reading the stand-in's signature
        if options.get("init", True):
            dataclasses.dataclass(cls, **{**options, "init": False, "match_args": False})
            # Named as `cls`, so its `__init__` reads as the standard one would, down to the
            # module whose globals it runs with.
            named = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
            maker = type(cls.__name__, (cls,), {**named, "__doc__": "(only its __init__ is kept)"})
            frozen = options.get("frozen", False)
            match_args = options.get("match_args", True)
            only_init = dataclasses.dataclass(
                frozen=frozen, repr=False, eq=False, match_args=match_args
            )
            made = vars(only_init(maker))
            setattr(cls, "__init__", made["__init__"])  # noqa: B010 (mypy: no assigning to a method)
            if match_args:
                setattr(cls, "__match_args__", made["__match_args__"])  # noqa: B010
            else:
                delattr(cls, "__match_args__")
        else:
            delattr(cls, "__init__")
            delattr(cls, "__match_args__")
            dataclasses.dataclass(cls, **options)
        cls.__doc__ = written_doc
        if not written_doc:  # as the standard decorator writes it, from the real signature
            cls.__doc__ = cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")


class _BuiltWhenRead:
    """A class attribute that only a built dataclass has: reading it builds the class."""

    def __init__(self, owner: type, name: str) -> None:
        self._owner = owner
        self._name = name

    def __get__(self, instance: object, seen_from: type | None = None) -> Any:
        _build(self._owner)
        return getattr(seen_from if seen_from is not None else self._owner, self._name)


def _wait(cls: type[_T], options: dict[str, Any]) -> type[_T]:
    if options.get("slots") or any(name in cls.__dict__ for name in _STAND_INS):
        return dataclasses.dataclass(cls, **options)

    def first_init(self: Any, *args: Any, **kwargs: Any) -> None:
        for klass in reversed(type(self).__mro__):
            _build(klass)
        cls.__init__(self, *args, **kwargs)

    owner: type[Any] = cls

    def subclassed(subclass: type, /, **kwargs: Any) -> None:
        if "__init__" in subclass.__dict__:
            _build(owner)
        super(owner, subclass).__init_subclass__(**kwargs)

    setattr(cls, _WAITING, options)
    _made_to_wait.append(cls)
    for name in _READ_STAND_INS:
        setattr(cls, name, _BuiltWhenRead(cls, name))
    setattr(cls, "__init__", first_init)  # noqa: B010 (mypy: no assigning to a method)
    setattr(cls, "__init_subclass__", classmethod(subclassed))  # noqa: B010
    return cls


def build_waiting() -> None:
    """Build every class still waiting. For a process that will use most of them on a thread
    that must stay responsive (the app's event loop): called in a worker thread, it spares the
    first uses there the builds, about a millisecond each."""
    for cls in list(_made_to_wait):
        _build(cls)


def built_on_use(cls: type[_T] | None = None, /, **options: Any) -> Any:
    """`@built_on_use` or `@built_on_use(frozen=True, ...)`: see the module's docstring."""
    if cls is None:

        def wrap(later: type[_T]) -> type[_T]:
            return _wait(later, options)

        return wrap
    return _wait(cls, options)


if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:
    dataclass: Callable[..., Any] = built_on_use
