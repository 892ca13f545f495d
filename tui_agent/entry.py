"""The console script's entry point (`tui-agent`, `python -m tui_agent`).

Before the command line loads anything, keys leave the environment (`keys.protect`), which
wipes them from the environment block in place (or, where it cannot, re-executes the process):
the fewer modules imported before that, the cheaper a re-execution is, so this module imports
only `os` up front.

pydantic looks for plugins on its first schema build by scanning the entry points of every
installed distribution; tui-agent uses none, so the scan is skipped by recording, before any
schema is built, that there are none (`_no_pydantic_plugins`). Setting
`PYDANTIC_DISABLE_PLUGINS` instead would reach every process the agent starts (tool shells,
hooks, MCP servers), so this process's state is changed and the environment is left alone.
"""

from __future__ import annotations

import os


def main() -> int:
    from tui_agent import keys

    keys.protect(_config_file())
    _no_pydantic_plugins()
    from tui_agent.cli import main as run

    return run()


def _config_file() -> str:
    # The rule of `session.AppPaths`, without loading the session package this early.
    home = os.environ.get("TUI_AGENT_HOME")
    if home:
        return os.path.join(os.path.expanduser(home), "config.toml")
    import platformdirs

    return os.path.join(platformdirs.user_config_dir("tui-agent"), "config.toml")


def _no_pydantic_plugins() -> None:
    # A person who set PYDANTIC_DISABLE_PLUGINS keeps pydantic's own reading of it. `_plugins`
    # is pydantic's cache of the plugins found (None: not looked for yet); an empty one is what
    # it records after a scan that found none. A private name: tests/test_imports.py checks
    # that a one-shot scans no distribution, so an upgrade that renames it fails there.
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ:
        return
    from pydantic.plugin import _loader

    _loader._plugins = {}
