"""The one module of ours that reaches below pydantic's public API (scripts/check_fences.py).

What it uses, and why:
- `pydantic.plugin._loader._plugins`, pydantic's cache of the plugins it found (None: not looked
  for yet). On its first schema build pydantic scans the entry points of every installed
  distribution for plugins; tui-agent uses none, so `skip_plugin_scan` records the empty result
  that scan would have found, before any schema is built (called as `tui_agent.vocab` loads).
  Setting `PYDANTIC_DISABLE_PLUGINS` instead would reach every process the agent starts (tool
  shells, hooks, MCP servers).
  tests/test_imports.py checks that a one-shot scans no distribution, and tests/test_entry.py
  that the name still means this, so an upgrade that renames it fails there.
"""

from __future__ import annotations

import os


def skip_plugin_scan() -> None:
    """No plugin scan in this process; a person who set PYDANTIC_DISABLE_PLUGINS keeps
    pydantic's own reading of it."""
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ:
        return
    from pydantic.plugin import _loader

    _loader._plugins = {}
