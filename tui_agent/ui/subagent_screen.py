"""A sub-agent's transcript (Enter on a `task` row): what the child loop said and did.

The screen keeps a view model of its own: a finished child's transcript, or a running child's
events so far and then each new one (gathered, and applied from Textual's queue, never inside
the child's emission: one callback for a burst of events, not one per streamed chunk). Esc
closes it; the child goes on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from tui_agent.loop.api import LoopInfo
from tui_agent.loop.events import LoopEvent, TurnFinished
from tui_agent.loop.snapshot import LoopSnapshot
from tui_agent.ui.state import Change, PaneChanged
from tui_agent.ui.view_model import ViewModel
from tui_agent.ui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from tui_agent.loop.api import SubagentRun
    from tui_agent.ui.app import TuiAgentApp


async def show_subagent(app: TuiAgentApp, call_id: str, title: str) -> None:
    """Open a `task` call's sub-agent transcript over the app (Enter on its row or block)."""
    # A finished sub-agent of a resumed session is read back from its log: off the loop.
    run = await asyncio.to_thread(app.loop.subagent, call_id)
    if run is None:
        app.vm.add_marker("warning", "That sub-agent has not started yet.")
        return
    app.push_screen(SubagentScreen(run, app.loop.info, title))


class SubagentScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "dismiss", "Close")]

    def __init__(self, run: SubagentRun, info: LoopInfo, title: str) -> None:
        super().__init__(id="subagent")
        self.run = run
        self._info = run.loop.info if run.loop is not None else info
        self.vm = ViewModel(self._info, clock=time.time)
        self.transcript = Transcript(self.vm, id="subagent-transcript")
        self._title = Static("", markup=False, classes="title")
        self._heading = title
        self._unwatch: Callable[[], None] | None = None
        self._pending: list[LoopEvent] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="subagent-box"):
            yield self._title
            yield self.transcript
        yield Footer()

    def on_mount(self) -> None:
        self.vm.listen(self._on_change)
        idle = LoopSnapshot("idle", None, None, 0, paused=False)
        if self.run.loop is None:
            self.vm.reset(self._info, self.run.transcript, idle)
        else:
            self.vm.reset(self._info, (), idle)
            for event in self.run.events:
                self.vm.apply(event)
            self._unwatch = self.run.watch(self._on_event)
        self._show_title()

    def _on_event(self, event: LoopEvent) -> None:
        self._pending.append(event)
        if len(self._pending) == 1:
            self.app.call_later(self._apply_pending)

    def _apply_pending(self) -> None:
        events, self._pending = self._pending, []
        if not self.is_attached:
            return
        for event in events:
            self.vm.apply(event)
            if isinstance(event, TurnFinished):
                self._show_title()

    def _on_change(self, change: Change) -> None:
        if not isinstance(change, PaneChanged):
            self.transcript.take(change)

    def _show_title(self) -> None:
        state = self.run.state
        tool = f" · {self.run.current_tool}" if self.run.current_tool else ""
        self._title.update(f"sub-agent: {self._heading} — {state}{tool}   (Esc: close)")

    def on_unmount(self) -> None:
        if self._unwatch is not None:
            self._unwatch()
