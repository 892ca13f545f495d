"""What the command line lends the app for commands that replace the loop.

/new, /sessions, /resume and /model need a different `LoopApi` (a new session, a resumed one, or
the same session on another model). The app cannot build one (it never sees providers or the
session store), so the command line passes these callbacks. Each returns the new loop; the app
unsubscribes from the old loop and closes it (callbacks never close it themselves): after the
new one opens, except for `switch_model(session_id, model)`, which reopens the same session, so
the old loop is closed (its log sealed) first. A callback left as None makes its command say it
is not available. No Textual import here: the
command line builds this object before it decides whether to load the UI.

`turn_end_notice` says how to tell the user that a turn ended or an approval waits while the
terminal was not focused (`bell+desktop`, `bell`, `desktop` or `off`, from config.toml); None,
as in tests: never. `terminal_lost` is called when the terminal hangs up (the command line
quits as for SIGHUP); None: the app quits as for Ctrl+Q. `repository` reads what the
workspace brings that the person has not trusted yet, and how to trust it all, for the start-up
trust prompt (None: nothing to ask, as in tests).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from tui_agent.lazy_dataclass import dataclass
from tui_agent.session import TrustLine

if TYPE_CHECKING:
    from tui_agent.loop.api import LoopApi
    from tui_agent.session import StatusLineCommand

Repository = tuple[list[TrustLine], Callable[[], None]]  # the pending items, and "trust them all"


@dataclass(frozen=True)
class SessionSummary:
    session_id: str
    title: str  # e.g. the first prompt
    updated: str  # already formatted for display, e.g. "2026-11-29 21:40"


@dataclass(frozen=True)
class SessionHooks:
    new_session: Callable[[], Awaitable[LoopApi]] | None = None
    list_sessions: Callable[[], Awaitable[list[SessionSummary]]] | None = None
    resume: Callable[[str], Awaitable[LoopApi]] | None = None
    switch_model: Callable[[str, str], Awaitable[LoopApi]] | None = None
    turn_end_notice: Callable[[], str] | None = None
    terminal_lost: Callable[[], None] | None = None
    repository: Callable[[], Awaitable[Repository | None]] | None = None


@dataclass(frozen=True)
class Appearance:
    """How the app looks, from config.toml: the theme and the status-line command (`ui/look.py`).

    `problems` are what reading those settings found (shown as notices); None fields: defaults.
    `settings`, when given, reads the rest after the first frame (in a worker thread: the
    configuration's models load pydantic), and only its status line and problems are used.
    """

    theme: str | None = None
    status_line: StatusLineCommand | None = None
    problems: tuple[str, ...] = ()
    settings: Callable[[], Appearance] | None = None
