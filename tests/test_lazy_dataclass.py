"""`tui_agent.lazy_dataclass`: a class waits, unbuilt, until something needs what only a built
dataclass has, and then behaves as `dataclasses.dataclass` made it; every dataclass of ours
builds."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pkgutil
import sys
import threading
from dataclasses import field
from typing import Any

import pydantic
import pytest

import tui_agent
from tui_agent.lazy_dataclass import build_waiting, dataclass


def waiting(cls: type) -> bool:
    return "__dataclass_waiting__" in vars(cls)


def test_a_class_waits_until_its_first_instance_and_then_is_the_standard_dataclass() -> None:
    @dataclass(frozen=True)
    class Point:
        x: int
        tags: list[str] = field(default_factory=list)

    assert waiting(Point)
    point = Point(1)

    assert not waiting(Point)
    assert point == Point(1, []) and point != Point(2)
    assert repr(point).endswith(".Point(x=1, tags=[])")
    assert hash(Point(1, ())) == hash(Point(1, ()))  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2  # type: ignore[misc]
    assert dataclasses.replace(point, x=3) == Point(3)
    assert copy.copy(point) == copy.deepcopy(point) == point
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]


def test_reading_what_only_a_dataclass_has_builds_it() -> None:
    @dataclass
    class Fields:
        a: int

    @dataclass
    class Checked:
        a: int

    @dataclass
    class Matched:
        a: int
        b: str

    assert [f.name for f in dataclasses.fields(Fields)] == ["a"]
    assert not waiting(Fields)
    assert dataclasses.is_dataclass(Checked) and not waiting(Checked)
    assert Matched.__match_args__ == ("a", "b")
    match Matched(1, "b"):
        case Matched(one, "b"):
            assert one == 1
        case _:
            pytest.fail("the positional pattern did not match")


def test_a_subclass_builds_its_bases_first() -> None:
    @dataclass(frozen=True)
    class Base:
        a: int

    @dataclass(frozen=True)
    class Child(Base):
        b: str = "b"

    class Plain(Child):
        pass

    assert Plain(1) == Plain(1, "b")
    assert not waiting(Base) and not waiting(Child)
    assert [f.name for f in dataclasses.fields(Child)] == ["a", "b"]


def test_a_plain_subclass_with_its_own_init_builds_the_class_it_extends() -> None:
    @dataclass(frozen=True)
    class Base:
        a: int

    class Own(Base):
        def __init__(self) -> None:  # never calls Base's
            object.__setattr__(self, "a", 5)

    assert not waiting(Base)
    assert Own() == Own() and repr(Own()).endswith(".Own(a=5)")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Own().a = 6  # type: ignore[misc]


def test_a_standard_dataclass_and_a_pydantic_model_can_build_on_one() -> None:
    @dataclass(frozen=True)
    class Inner:
        a: int

    @dataclasses.dataclass(frozen=True)
    class Outer(Inner):
        b: int = 0

    class Model(pydantic.BaseModel):
        inner: Inner

    assert Outer(1, 2).a == 1
    assert Model.model_validate({"inner": {"a": 3}}).inner == Inner(3)


def test_an_exception_keeps_its_arguments() -> None:
    @dataclass
    class Failed(Exception):
        reason: str

    error = Failed("boom")
    assert error.args == ("boom",) and str(error) == "boom" and error == Failed("boom")


def test_a_class_that_cannot_be_built_in_place_is_built_at_once() -> None:
    @dataclass(frozen=True, slots=True)
    class Slotted:
        a: int

    @dataclass
    class OwnInit:
        a: int = 0

        def __init__(self) -> None:
            self.a = 7

    assert not waiting(Slotted) and not hasattr(Slotted(1), "__dict__")
    assert not waiting(OwnInit) and OwnInit() == OwnInit()


def test_a_thread_using_the_class_during_the_build_waits_for_it() -> None:
    @dataclass(frozen=True)
    class Shared:
        a: int
        b: tuple[int, ...] = field(default_factory=tuple)

    builds: list[type] = []
    made: list[Shared] = []
    failed: list[BaseException] = []
    real = dataclasses.dataclass

    def other_thread() -> None:
        try:
            assert [f.name for f in dataclasses.fields(Shared)] == ["a", "b"]
            assert Shared.__match_args__ == ("a", "b")
            made.append(Shared(2))
        except BaseException as error:
            failed.append(error)

    other = threading.Thread(target=other_thread)

    def building(cls: type | None = None, /, **options: Any) -> Any:
        if cls is Shared and not builds:
            # In the middle of the build: the other thread's first instance, fields and match
            # arguments must wait for it (a stand-in gone too early would send it to
            # `object.__init__`, or find no fields).
            other.start()
            other.join(timeout=0.2)
        if cls is not None:
            builds.append(cls)
        return real(cls, **options)

    dataclasses.dataclass = building
    try:
        made.append(Shared(1))
        other.join()
    finally:
        dataclasses.dataclass = real
    assert failed == []
    assert sorted(item.a for item in made) == [1, 2] and made[0].b == ()
    assert builds.count(Shared) == 1


def test_the_built_class_reads_as_the_standard_one() -> None:
    @dataclass(frozen=True)
    class Documented:
        """Written."""

        a: int

    @dataclass
    class Undocumented:
        a: int
        b: str = "b"

    @dataclass(init=False)
    class NoInit:
        a: int = 1

    @dataclass(match_args=False)
    class Unmatched:
        a: int

    assert Documented(1).__doc__ == "Written."
    assert Undocumented(1).__doc__ == "Undocumented(a: 'int', b: 'str' = 'b')"
    assert Undocumented.__init__.__qualname__.endswith("<locals>.Undocumented.__init__")
    assert Undocumented.__init__.__module__ == __name__
    assert NoInit().a == 1 and NoInit.__init__ is object.__init__
    assert NoInit.__match_args__ == ("a",)
    assert Unmatched(1).a == 1 and not hasattr(Unmatched, "__match_args__")


def test_every_dataclass_of_ours_builds() -> None:
    # The standard decorator's own errors (a field without a default after one with one, a
    # mutable default) come at the first use of a waiting class: build them all here, as the
    # app does in a worker thread once the loop's modules are loaded.
    for module in pkgutil.walk_packages(tui_agent.__path__, "tui_agent."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)

    def ours_waiting() -> list[type]:
        return [
            cls
            for module in list(sys.modules.values())
            if getattr(module, "__name__", "").startswith("tui_agent")
            for cls in vars(module).values()
            if isinstance(cls, type) and waiting(cls)
        ]

    assert len(ours_waiting()) > 0
    build_waiting()
    assert ours_waiting() == []
