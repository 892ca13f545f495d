"""The full-screen Textual app. Imported lazily by the command line: Textual loads only here.

`TuiAgentApp(loop, *, initial_prompt=None, hooks=None, clock=time.time)` is the app;
`SessionHooks` carries the callbacks for /new, /sessions, /resume and /model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui_agent.ui.hooks import SessionHooks, SessionSummary

if TYPE_CHECKING:
    from tui_agent.ui.app import TuiAgentApp

__all__ = ["SessionHooks", "SessionSummary", "TuiAgentApp"]


def __getattr__(name: str) -> Any:
    if name == "TuiAgentApp":
        from tui_agent.ui.app import TuiAgentApp

        return TuiAgentApp
    raise AttributeError(name)
