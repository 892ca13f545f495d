"""The fence check (`scripts/check_fences.py`) on planted snippets for python-statemachine and
Textual, and on the package itself."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from scripts.check_fences import FENCES, Fence, check

BOTH = {
    "statemachine": FENCES["statemachine"],
    "textual": Fence("pkg.ui._textual_hooks"),
}


def plant(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
    for folder in {p.parent for p in root.rglob("*.py")}:
        (folder / "__init__.py").touch()
    return root


def found(root: Path, fences: dict[str, Fence] = BOTH) -> set[tuple[str, int, str]]:
    return {
        (Path(f.path).relative_to(root).as_posix(), f.line, f.name) for f in check(root, fences)
    }


STATEMACHINE_ENGINE = """\
from statemachine import StateChart
from statemachine.engines.async_ import AsyncEngine
from statemachine.invoke import InvokeManager


class Engine(AsyncEngine):
    async def _conditions_match(self, transition, trigger_data):
        registry = self.sm._callbacks
        return self._cache.get(transition) or await super()._get_args_kwargs(transition, None)


class Manager(InvokeManager):
    @staticmethod
    def _resolve_handler(underlying):
        return InvokeManager._resolve_handler(underlying)


class Chart(StateChart):
    def _get_engine(self):
        return Engine(self)

    def restart(self):
        self._engine = self._get_engine()
"""

# Our own class that happens to use names python-statemachine also uses privately.
OURS = """\
import os


class Listeners:
    def __init__(self):
        self._callbacks = []
        self._engine = None

    def merge(self, other: "Listeners"):
        self._callbacks += other._callbacks
        os._exit(1)
"""


def test_statemachine_internals_outside_the_fence_are_reported(tmp_path: Path) -> None:
    root = plant(tmp_path, {"kernel/engine.py": STATEMACHINE_ENGINE, "ours.py": OURS})
    assert found(root) == {
        ("kernel/engine.py", 2, "statemachine.engines.async_"),
        ("kernel/engine.py", 3, "statemachine.invoke"),
        ("kernel/engine.py", 7, "_conditions_match"),
        ("kernel/engine.py", 8, "_callbacks"),
        ("kernel/engine.py", 9, "_cache"),
        ("kernel/engine.py", 9, "_get_args_kwargs"),
        ("kernel/engine.py", 14, "_resolve_handler"),
        ("kernel/engine.py", 15, "_resolve_handler"),
        ("kernel/engine.py", 19, "_get_engine"),
        ("kernel/engine.py", 23, "_engine"),
        ("kernel/engine.py", 23, "_get_engine"),
    }


def test_the_registered_fence_module_may_touch_its_library(tmp_path: Path) -> None:
    root = plant(tmp_path, {"kernel/_sm.py": STATEMACHINE_ENGINE})
    assert found(root, {"statemachine": Fence("pkg.kernel._sm")}) == set()
    # The fence of one library gives no licence for another's internals.
    other = {"statemachine": Fence("pkg.kernel.elsewhere"), "textual": Fence("pkg.kernel._sm")}
    assert ("kernel/_sm.py", 7, "_conditions_match") in found(root, other)


TEXTUAL_WIDGETS = """\
from typing import TYPE_CHECKING

import textual._xterm_parser
from textual import _ansi_sequences
from textual.app import App
from textual.screen import Screen
from textual.widget import Widget

if TYPE_CHECKING:
    _Base = Widget
else:
    _Base = object


class Sized(_Base):
    def _size_updated(self, size, virtual_size, container_size, layout=True):
        return super()._size_updated(size, virtual_size, container_size, layout=False)


class View(Sized, Widget):
    def refresh_now(self):
        self._size = None


class Main(Screen):
    def _on_idle(self, event):
        if self.app._batch_count == 0:
            self._on_timer_update()


def batching(app: App) -> bool:
    return app._batch_count > 0
"""

# Our own widget-free class whose private names Textual also defines.
TEXTUAL_OURS = """\
class Cache:
    def __init__(self):
        self._size = 0
        self._lock = None

    def grow(self, other: "Cache"):
        self._size += other._size
"""


def test_textual_internals_outside_the_fence_are_reported(tmp_path: Path) -> None:
    root = plant(tmp_path, {"ui/widgets.py": TEXTUAL_WIDGETS, "ui/cache.py": TEXTUAL_OURS})
    assert found(root) == {
        ("ui/widgets.py", 3, "textual._xterm_parser"),
        ("ui/widgets.py", 4, "_ansi_sequences"),
        ("ui/widgets.py", 16, "_size_updated"),
        ("ui/widgets.py", 17, "_size_updated"),
        ("ui/widgets.py", 22, "_size"),
        ("ui/widgets.py", 26, "_on_idle"),
        ("ui/widgets.py", 27, "_batch_count"),
        ("ui/widgets.py", 28, "_on_timer_update"),
        ("ui/widgets.py", 32, "_batch_count"),
    }


@pytest.mark.parametrize("library", ["statemachine", "textual"])
def test_an_unregistered_library_is_not_checked(tmp_path: Path, library: str) -> None:
    root = plant(tmp_path, {"a.py": STATEMACHINE_ENGINE, "b.py": TEXTUAL_WIDGETS})
    assert {Path(f.path).name for f in check(root, {library: BOTH[library]})} == {
        "a.py" if library == "statemachine" else "b.py"
    }


def test_the_package_touches_no_private_name_outside_its_fences() -> None:
    root = Path(__file__).resolve().parent.parent / "tui_agent"
    assert [str(f) for f in check(root)] == []
