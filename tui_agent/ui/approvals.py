"""The approval flow: a waiting request shows in the box above the draft, and keys answer it
only when they are meant for it.

The box takes the keyboard unless the person is typing in the draft right now; `y`, `a` and `n`
answer only when the person is quiet (no key for `QUIET_S` and the draft untouched since the
request appeared), and `a`/`n` followed at once by another letter were the start of a word, so
both go to the draft. Tab moves between the draft and the box. A sub-agent's transcript that
covers the box is closed first. The answer goes to the loop (`LoopApi.answer_approval`).
An MCP server's request for input is answered in a form of its own (`elicit`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events

from tui_agent.ui.widgets.approval_bar import QUIET_S, ApprovalBar
from tui_agent.ui.widgets.pane import FollowsViewModel

if TYPE_CHECKING:
    from tui_agent.loop.elicitation import ElicitAnswer, ElicitRequest
    from tui_agent.ui.app import TuiAgentApp


class ApprovalFlow:
    """The approval flow of one app (see the module)."""

    def __init__(self, app: TuiAgentApp) -> None:
        self.app = app
        self.last_key_at = float("-inf")  # when the person last pressed a key
        self._draft_at_ask = ""  # the draft when the shown approval appeared
        self._last_quiet = False  # whether the person was quiet before the key being handled
        self._letter: tuple[str, float] | None = None  # `a`/`n` that opened a step, and when
        FollowsViewModel(app, app.vm, ("approvals",), self.show)

    async def elicit(self, request: ElicitRequest) -> ElicitAnswer:
        """The app's answer to an MCP server's `elicitation/create`: the person fills a form."""
        from tui_agent.ui.elicitation_screen import ask  # only once a server asks

        return await ask(self.app, request)

    def key_arrived(self) -> bool:
        """A key came from the terminal: whether the person had been quiet before it."""
        quiet = self._last_quiet = self.quiet()
        self.last_key_at = self.app.clock()
        return quiet

    def took_letter(self, event: events.Key) -> bool:
        """`a` and `n` open a second step (where to keep the rule, the reason). A printable key
        right after one (within `QUIET_S`) that this step does not take means the letter was
        the start of a word: the step closes and both go to the draft. True: handled here."""
        bar, letter = self.app.approval_bar, self._letter
        self._letter = None
        char = event.character or ""
        if (
            event.is_printable
            and self.app.focused is bar
            and char in ("a", "n")
            and bar.takes(char, quiet=self._last_quiet)
        ):
            # Acted on here, not through the box's bindings: those run later, from its own
            # queue, and the keys typed behind this one must find the step already open.
            self._letter = (char, self.last_key_at)
            bar.action_letter(char)
            return True
        if letter is None or not event.is_printable:
            return False
        typed, at = letter
        in_step = bar.asking_reason or (bar.choosing_scope and not bar.takes(char, quiet=False))
        if not in_step or self.last_key_at - at >= QUIET_S:
            return False
        bar.back(refocus=False)
        self.app.prompt_input.display = True
        self.app.screen.set_focus(self.app.prompt_input)
        self.app.prompt_input.insert(typed + char)
        return True

    def quiet(self) -> bool:
        """The person is not typing: no key for `QUIET_S` and the draft untouched since the
        approval appeared (only then do `y`, `a` and `n` answer it)."""
        return (
            self.app.clock() - self.last_key_at >= QUIET_S
            and self.app.prompt_input.text == self._draft_at_ask
        )

    def show(self) -> None:
        """The box shows above the draft, which stays as it was. It takes the keyboard unless
        the person is typing in the draft right now (Tab then goes to it)."""
        if not self.app.main_screen.is_attached:
            return
        self._present()
        self.app._sync_footer()

    def _present(self) -> None:
        approvals = self.app.vm.approvals
        if approvals and self.app.screen.id == "subagent":
            # A sub-agent's transcript covers the box, and that sub-agent may be the one asking:
            # close it, and show the box (focused) once the main screen is back.
            self.app.screen.dismiss()
            self.app.call_after_refresh(self.show)
            return
        bar = self.app.approval_bar
        had_focus = self.app.focused is bar or bar.has_focus_within
        if approvals:
            new = bar.request is None or bar.request.request_id != approvals[0].request_id
            bar.ask(approvals[0], len(approvals) - 1)
            bar.display = True
            if new:
                self._draft_at_ask = self.app.prompt_input.text
            # Mid-word in the draft: the keyboard stays there (an empty draft, e.g. just sent,
            # is no typing; its next letters still wait out `QUIET_S` before they answer).
            typing = (
                self.app.focused is self.app.prompt_input
                and bool(self.app.prompt_input.text)
                and not self.quiet()
            )
            take = not had_focus and not typing and len(self.app.screen_stack) == 1
            if take:
                bar.focus()
            # An empty draft nobody types in gives its rows to the box (small terminals).
            self.app.prompt_input.display = bool(self.app.prompt_input.text) or (
                self.app.focused is self.app.prompt_input and not take
            )
        else:
            bar.expanded = False
            bar.display = False
            bar.request = None
            self.app.prompt_input.display = True
            if had_focus or self.app.focused is None:
                self.app.prompt_input.focus()

    def answered(self, message: ApprovalBar.Answered) -> None:
        """The person answered the shown request: the loop is told, in a task."""
        answer = self.app.loop.answer_approval(
            message.request_id,
            message.decision,
            message.reason,
            keep=message.keep,
            mode=message.mode,
        )
        self.app._call(answer, "approval")
