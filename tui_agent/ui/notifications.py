"""Calling an unfocused person back: the bell and desktop notifications.

While the terminal is not focused, the moments the person must come back (a turn ended, an
approval waits) ring the bell and/or ask the terminal for a desktop notification, as the
`turn_end_notice` setting says: OSC 9 (iTerm2, kitty, WezTerm, ghostty) and OSC 777 (foot,
Konsole, VTE terminals), both written, since a terminal ignores the one it does not know.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.ui._textual_hooks import app_driver

if TYPE_CHECKING:
    from tui_agent.loop.events import LoopEvent
    from tui_agent.ui.app import TuiAgentApp


def call_back(app: TuiAgentApp, event: LoopEvent) -> None:
    """Call the person back for `event` when it is a turn's end or a waiting approval and the
    terminal is not focused (see the module)."""
    if app.app_focus:
        return
    from tui_agent.loop.events import ApprovalRequested, TurnFinished  # loaded with the loop

    if isinstance(event, TurnFinished):
        text = f"turn {event.result.type}: {app.vm.status.session_id}"
    elif isinstance(event, ApprovalRequested):
        text = f"approval needed: {event.name} {event.summary}"
    else:
        return
    how = app.hooks.turn_end_notice() if app.hooks.turn_end_notice is not None else "off"
    if "bell" in how:
        app.bell()
    if "desktop" in how and (driver := app_driver(app)) is not None:
        text = "".join(c for c in text if c.isprintable())  # no BEL or ESC ends it early
        driver.write(f"\x1b]9;{text}\x07\x1b]777;notify;tui-agent;{text}\x07")
