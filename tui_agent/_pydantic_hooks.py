"""The one module of ours that reaches below pydantic's public API (scripts/check_fences.py).

What it uses, and why:
- `pydantic.plugin._loader`, where pydantic finds its plugins: on its first schema build it
  imports that module (which imports `importlib.metadata`, with `zipfile`, `csv` and
  `importlib.abc`: 6-12 ms of a one-shot's CPU, for nothing else of ours) and calls its
  `get_plugins`, which scans the entry points of every installed distribution.
  tui-agent uses no plugin, so `skip_plugin_scan`, called as `tui_agent.vocab` loads (before any
  schema of ours is built), puts in its place a module whose `get_plugins` finds none; when
  pydantic's module is already loaded, it records the empty result there instead (`_plugins`,
  its cache: None means not looked for yet).
  Setting `PYDANTIC_DISABLE_PLUGINS` instead would reach every process the agent starts (tool
  shells, hooks, MCP servers). tests/test_imports.py checks that a one-shot scans no
  distribution and loads no `importlib.metadata`, and tests/test_pydantic_hooks.py that the
  names still mean this, so an upgrade that renames them fails there.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from types import ModuleType

_LOADER = "pydantic.plugin._loader"


def skip_plugin_scan() -> None:
    """No plugin scan in this process; a person who set PYDANTIC_DISABLE_PLUGINS keeps
    pydantic's own reading of it."""
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ:
        return
    if _LOADER in sys.modules:
        from pydantic.plugin import _loader

        _loader._plugins = {}
        return
    stand_in = ModuleType(_LOADER, "pydantic's plugin loader, finding none (tui_agent)")
    vars(stand_in)["get_plugins"] = _no_plugins
    sys.modules[_LOADER] = stand_in


def _no_plugins() -> Iterable[object]:
    return ()
