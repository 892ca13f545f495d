"""pydantic is told there are no plugins without a scan, through this
process's state alone, so nothing the agent starts inherits a setting, and a person's own
`PYDANTIC_DISABLE_PLUGINS` is left to pydantic."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from types import ModuleType

import pytest

from tui_agent._pydantic_hooks import skip_plugin_scan

VARIABLE = "PYDANTIC_DISABLE_PLUGINS"
LOADER = "pydantic.plugin._loader"


@pytest.fixture
def loader(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """pydantic's own plugin loader, loaded: a test module that imported `tui_agent.vocab`
    earlier in this process left the stand-in in its place."""
    monkeypatch.delitem(sys.modules, LOADER, raising=False)
    return importlib.import_module(LOADER)


@pytest.fixture
def scans(loader: ModuleType, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """pydantic's plugin cache as at a fresh start, with its entry-point scan counted."""
    found: list[str] = []

    def entry_points(*, group: str) -> list[object]:
        found.append(group)
        return []

    monkeypatch.setattr(loader, "_plugins", None)
    monkeypatch.setattr(loader, "entry_points", entry_points)
    return found


def test_pydantic_finds_no_plugins_without_a_scan_nor_a_variable(
    loader: ModuleType, scans: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(VARIABLE, raising=False)
    skip_plugin_scan()
    assert list(loader.get_plugins()) == []
    assert len(scans) == 0
    assert VARIABLE not in os.environ  # so no tool, hook or server started later sees one


def test_a_person_who_set_the_variable_keeps_pydantics_reading_of_it(
    loader: ModuleType, scans: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(VARIABLE, "someone-elses-plugin")  # disables that one plugin only
    skip_plugin_scan()
    assert os.environ[VARIABLE] == "someone-elses-plugin"
    list(loader.get_plugins())
    assert scans == ["pydantic"]  # pydantic looked for the other plugins, as it would have


def test_before_pydantic_looks_its_loader_is_replaced_by_one_that_finds_none() -> None:
    # A fresh interpreter: the console script calls it before pydantic's loader is imported,
    # so neither it nor `importlib.metadata` (which only it needs) is loaded at all.
    code = """
import os, sys
os.environ.pop("PYDANTIC_DISABLE_PLUGINS", None)
from tui_agent._pydantic_hooks import skip_plugin_scan
skip_plugin_scan()
from pydantic import BaseModel
class Point(BaseModel):
    x: int
assert Point(x=1).x == 1  # a schema was built and validated with
from pydantic.plugin import _loader
assert list(_loader.get_plugins()) == []
assert "importlib.metadata" not in sys.modules
"""
    subprocess.run([sys.executable, "-c", code], check=True)
