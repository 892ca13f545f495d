"""The inline approval request, shown in place of the prompt input while a call waits.

`y` allows once, `a` always (for the rule shown), `n` denies; after `n` the user may type a
reason the model will see and press Enter (empty: no reason; Esc: back to the question).
Requests after the first wait in the tool pane and appear here one at a time.
"""

from __future__ import annotations

from typing import ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import var
from textual.widgets import Input, Static

from tui_agent.loop.api import ApprovalDecision
from tui_agent.ui.view_model import Approval

PREVIEW_LINES = 12  # the rest of a long diff is summarised; the tool pane has the call


class ApprovalBar(Vertical, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('once')", "Yes"),
        Binding("a", "answer('always')", "Always"),
        Binding("n", "deny", "No"),
    ]
    asking_reason: var[bool] = var(False, toggle_class="-reason")

    class Answered(Message):
        def __init__(self, request_id: str, decision: ApprovalDecision, reason: str | None) -> None:
            super().__init__()
            self.request_id = request_id
            self.decision = decision
            self.reason = reason

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.request: Approval | None = None
        self.waiting = 0
        self._question = Static("", classes="question", markup=False)
        self._preview = Static("", classes="preview", markup=False)
        self._reason = Input(placeholder="why not? (Enter sends, empty for no reason)")

    def compose(self) -> ComposeResult:
        yield self._preview
        yield self._question
        yield self._reason

    def ask(self, request: Approval, waiting: int) -> None:
        if self.request is None or self.request.request_id != request.request_id:
            self.asking_reason = False
            self._reason.value = ""
        self.request = request
        self.waiting = waiting
        self._question.update(self._question_text())
        preview = request.preview.strip("\n")
        self._preview.display = bool(preview) and preview != request.summary.strip()
        if self._preview.display:
            lines = preview.splitlines()
            if len(lines) > PREVIEW_LINES:
                hidden = len(lines) - PREVIEW_LINES
                lines = [*lines[:PREVIEW_LINES], f"… {hidden} more lines"]
            is_diff = preview.startswith(("---", "@@", "diff "))
            self._preview.update(
                Syntax("\n".join(lines), "diff" if is_diff else "bash", theme="ansi_dark")
            )

    def _question_text(self) -> Text:
        request = self.request
        text = Text()
        if request is None:
            return text
        text.append("Allow ", style="bold")
        text.append(request.name, style="bold")
        text.append("?\n")
        text.append(request.summary.rstrip())
        text.append("\n")
        text.append("y", style="bold reverse")
        text.append(" once  ")
        text.append("a", style="bold reverse")
        text.append(f" always ({request.rule})  ")
        text.append("n", style="bold reverse")
        text.append(" deny")
        if self.waiting:
            text.append(f"   ({self.waiting} more waiting)", style="dim")
        return text

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("answer", "deny") and (self.request is None or self.asking_reason):
            return None
        return True

    def action_answer(self, decision: ApprovalDecision) -> None:
        if self.request is not None:
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
