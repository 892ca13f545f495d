"""The inline approval request, shown in place of the prompt input while a call waits.

`y` allows once, `a` always (for the rule shown), `n` denies; after `n` the user may type a
reason the model will see and press Enter (empty: no reason; Esc: back to the question).
Requests after the first wait in the tool pane and appear here one at a time.

The preview (a diff with line numbers, or the command) is whole: it scrolls with Up/Down and
PageUp/PageDown, and `v` gives it the whole screen. Keys that reach the box less than
`GUARD_S` after it appeared were typed before anyone could read it: `armed` says when the box
may be answered, and the app sends earlier keys to the draft instead (each one restarts the wait).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import var
from textual.widgets import Input, Static

from tui_agent.loop.api import ApprovalDecision
from tui_agent.ui.view_model import Approval
from tui_agent.ui.widgets.diff_view import render_diff

GUARD_S = 0.3  # a key this soon after the box appeared was meant for the prompt


class ApprovalBar(Vertical, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('once')", "Yes"),
        Binding("a", "answer('always')", "Always"),
        Binding("n", "deny", "No"),
        Binding("v", "expand", "View all"),
        Binding("up", "scroll(-1)", "Scroll", show=False),
        Binding("down", "scroll(1)", "Scroll", show=False),
        Binding("pageup", "scroll(-10)", "Scroll", show=False),
        Binding("pagedown", "scroll(10)", "Scroll", show=False),
    ]
    asking_reason: var[bool] = var(False, toggle_class="-reason")
    expanded: var[bool] = var(False, toggle_class="-expanded")

    class Answered(Message):
        def __init__(self, request_id: str, decision: ApprovalDecision, reason: str | None) -> None:
            super().__init__()
            self.request_id = request_id
            self.decision = decision
            self.reason = reason

    def __init__(self, *, clock: Callable[[], float], id: str | None = None) -> None:
        super().__init__(id=id)
        self.request: Approval | None = None
        self.waiting = 0
        self.clock = clock
        self._armed_at = 0.0
        self._question = Static("", classes="question", markup=False)
        self._preview = Static("", markup=False)
        self._scroll = VerticalScroll(self._preview, classes="preview", can_focus=False)
        self._reason = Input(placeholder="why not? (Enter sends, empty for no reason)")

    def compose(self) -> ComposeResult:
        yield self._scroll
        yield self._question
        yield self._reason

    def ask(self, request: Approval, waiting: int) -> None:
        if self.request is None or self.request.request_id != request.request_id:
            self.asking_reason = False
            self.expanded = False
            self._reason.value = ""
            self._armed_at = self.clock() + GUARD_S
            self._scroll.scroll_home(animate=False)
        self.request = request
        self.waiting = waiting
        preview = request.preview.strip("\n")
        self._scroll.display = bool(preview) and preview != request.summary.strip()
        self._question.update(self._question_text())
        if self._scroll.display:
            if preview.startswith(("---", "@@", "diff ")):
                self._preview.update(render_diff(preview))
            else:
                self._preview.update(Syntax(preview, "bash", theme="ansi_dark", word_wrap=True))

    @property
    def armed(self) -> bool:
        """Whether a key now may answer: the box has been on screen for `GUARD_S`."""
        return self.clock() >= self._armed_at

    def hold(self) -> None:
        """A key was typed too soon: keep the box unanswerable for another `GUARD_S`."""
        self._armed_at = self.clock() + GUARD_S

    def _question_text(self) -> Text:
        request = self.request
        text = Text()
        if request is None:
            return text
        text.append("Allow ", style="bold")
        text.append(request.name, style="bold")
        text.append("?")
        if request.task:
            text.append(f'  (from task "{request.task}")', style="italic")
        text.append("\n")
        text.append(request.summary.rstrip())
        text.append("\n")
        text.append("y", style="bold reverse")
        text.append(" once  ")
        text.append("a", style="bold reverse")
        text.append(f" always ({request.rule})  ")
        text.append("n", style="bold reverse")
        text.append(" deny  ")
        if self._scroll.display:
            text.append("v", style="bold reverse")
            text.append(" less" if self.expanded else " view all")
            text.append("  ↑↓ scroll", style="dim")
        if self.waiting:
            text.append(f"   ({self.waiting} more waiting)", style="dim")
        return text

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("answer", "deny") and (self.request is None or self.asking_reason):
            return None
        if action in ("expand", "scroll") and not self._scroll.display:
            return None
        return True

    def action_expand(self) -> None:
        self.expanded = not self.expanded

    def watch_expanded(self, expanded: bool) -> None:
        # The whole screen but the status bar and footer: the transcript steps aside.
        self.screen.set_class(expanded, "-approval-expanded")
        self._question.update(self._question_text())

    def action_scroll(self, lines: int) -> None:
        self._scroll.scroll_relative(y=lines, animate=False)

    def action_answer(self, decision: ApprovalDecision) -> None:
        if self.request is not None:
            self.expanded = False
            self.post_message(self.Answered(self.request.request_id, decision, None))

    def watch_asking_reason(self) -> None:
        self.refresh_bindings()

    def action_deny(self) -> None:
        self.asking_reason = True
        self._reason.focus()

    def cancel_reason(self) -> None:
        self.asking_reason = False
        self.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.request is not None:
            reason = event.value.strip() or None
            self.post_message(self.Answered(self.request.request_id, "deny", reason))
        self.asking_reason = False
