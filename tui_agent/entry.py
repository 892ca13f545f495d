"""The console script's entry point (`tui-agent`, `python -m tui_agent`).

Before the command line loads anything, keys leave the environment (`keys.protect`), which
wipes them from the environment block in place (or, where it cannot, re-executes the process):
the fewer modules imported before that, the cheaper a re-execution is, so this module imports
only `os` up front.

Cyclic garbage collection is off from the first line: start-up allocates hundreds of thousands
of objects that live as long as the process (modules, classes, schemas, the first widgets), and
collecting among them finds nothing while costing a tenth of a one-shot. `cli` turns it back on
(with what exists by then frozen out of later collections) once the headless loop is open or the
app has drawn its first frame, and at once for the subcommands.

pydantic looks for plugins on its first schema build by scanning the entry points of every
installed distribution; tui-agent uses none, so the scan is skipped (`_pydantic_hooks`, the fence
module for pydantic's private names) when the vocabulary loads, before any schema is built: not
here, so the full-screen app draws its first frame without pydantic.
"""

from __future__ import annotations

import gc
import os


def main() -> int:
    gc.disable()
    from tui_agent import keys

    keys.protect(_config_file())
    from tui_agent.cli import main as run

    return run()


def _config_file() -> str:
    # The rule of `session.AppPaths`, without loading the session package this early.
    home = os.environ.get("TUI_AGENT_HOME")
    if home:
        return os.path.join(os.path.expanduser(home), "config.toml")
    import platformdirs

    return os.path.join(platformdirs.user_config_dir("tui-agent"), "config.toml")
