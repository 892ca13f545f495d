"""The approval box, shown above the prompt while a call (or a plan, or a project's files) waits.

It answers the way Claude Code's does: a short numbered menu, picked with its number, or with
Up/Down and Enter. For a call: 1. Yes, 2. Yes, and always allow the rule (then: for this session,
this project or everywhere), 3. No, and tell the model what to do differently. For a plan: accept
it and continue in auto-edit, ask or yolo, or keep planning with feedback. For a project's files:
yes, yes and remember, no. `y`, `a` and `n` answer too, but only while the person is not typing
(the app decides: no key in the last `QUIET_S` and the draft untouched since the box appeared);
any other key typed while the box is up goes to the draft, never lost, never an answer.

The preview (a diff with line numbers, the command, the plan) is whole: it scrolls with
PageUp/PageDown, and `v` gives it the whole screen. The box says why it asks when the mode
alone would not have, and whether a command would run sandboxed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import var
from textual.widgets import Input, Static

from tui_agent.lazy_dataclass import dataclass
from tui_agent.ui.state import Approval
from tui_agent.ui.widgets.diff_view import render_diff

if TYPE_CHECKING:
    from tui_agent.loop.api import ApprovalDecision
    from tui_agent.vocab import ApprovalMode, RuleScope

QUIET_S = 1.0  # a letter answers only after this long without a key


@dataclass(frozen=True)
class Choice:
    label: str
    decision: ApprovalDecision
    letter: str = ""  # y, a or n: answers while the person is not typing
    keep: RuleScope = "session"
    mode: ApprovalMode | None = None
    reason: str = ""  # asks for words to pass on first (the input's placeholder)
    scopes: bool = False  # asks where to keep the rule first


SCOPES = (
    Choice("for this session", "always", keep="session"),
    Choice("for this project (.tui-agent/settings.local.json)", "always", keep="project"),
    Choice("everywhere (config.toml)", "always", keep="user"),
)


def choices(request: Approval) -> tuple[Choice, ...]:
    if request.kind == "plan":
        return (
            Choice("Yes, and auto-accept edits (auto-edit)", "once", "y", mode="auto-edit"),
            Choice("Yes, and approve each edit (ask)", "once", mode="ask"),
            Choice("Yes, and run everything (yolo)", "once", mode="yolo"),
            Choice("No, keep planning", "deny", "n", reason="what should change? (Enter sends)"),
        )
    if request.kind == "trust":
        return (
            Choice("Yes, for this session", "once", "y"),
            Choice("Yes, and remember for this workspace", "always", "a"),
            Choice("No", "deny", "n"),
        )
    always = (
        (Choice(f"Yes, and always allow {request.rule}", "always", "a", scopes=True),)
        if request.rules
        else ()
    )
    deny = Choice(
        "No, and tell the model what to do instead",
        "deny",
        "n",
        reason="what should it do instead? (Enter sends, empty for no reason)",
    )
    return (Choice("Yes", "once", "y"), *always, deny)


class ApprovalBar(Vertical, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(str(n), f"pick({n - 1})", show=False) for n in range(1, 10)),
        Binding("y", "letter('y')", "Yes", show=False),
        Binding("a", "letter('a')", "Always", show=False),
        Binding("n", "letter('n')", "No", show=False),
        Binding("up", "move(-1)", "Choose", show=False),
        Binding("down", "move(1)", "Choose", show=False),
        Binding("enter", "pick_highlighted", "Answer"),
        Binding("v", "expand", "View all"),
        Binding("pageup", "scroll(-10)", "Scroll", show=False),
        Binding("pagedown", "scroll(10)", "Scroll", show=False),
    ]
    asking_reason: var[bool] = var(False, toggle_class="-reason")
    expanded: var[bool] = var(False, toggle_class="-expanded")

    class Answered(Message):
        def __init__(
            self,
            request_id: str,
            decision: ApprovalDecision,
            reason: str | None,
            *,
            keep: RuleScope = "session",
            mode: ApprovalMode | None = None,
        ) -> None:
            super().__init__()
            self.request_id = request_id
            self.decision = decision
            self.reason = reason
            self.keep = keep
            self.mode = mode

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.request: Approval | None = None
        self.waiting = 0
        self.menu: tuple[Choice, ...] = ()
        self.highlighted = 0
        self.choosing_scope = False
        self._denying: Choice | None = None
        self._question = Static("", classes="question", markup=False)
        self._menu = Static("", classes="menu", markup=False)
        self._preview = Static("", markup=False)
        self._scroll = VerticalScroll(self._preview, classes="preview", can_focus=False)
        self._reason = Input()

    def compose(self) -> ComposeResult:
        yield self._scroll
        yield self._question
        yield self._menu
        yield self._reason

    def ask(self, request: Approval, waiting: int) -> None:
        if self.request is None or self.request.request_id != request.request_id:
            self.asking_reason = False
            self.expanded = False
            self.choosing_scope = False
            self.highlighted = 0
            self._reason.value = ""
            self._scroll.scroll_home(animate=False)
        self.request = request
        self.waiting = waiting
        self.menu = choices(request)
        preview = request.preview.strip("\n")
        self._scroll.display = bool(preview) and preview != request.summary.strip()
        if self._scroll.display:
            self._preview.update(_preview(request, preview))
        self._redraw()

    # ------------------------------------------------------------------ drawing

    def on_focus(self) -> None:
        self._redraw()

    def on_blur(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        if self.request is not None:
            self._question.update(self._question_text(self.request))
            self._menu.update(self._menu_text())

    def _question_text(self, request: Approval) -> Text:
        text = Text()
        if request.kind == "plan":
            text.append("Accept this plan?", style="bold")
        elif request.kind == "trust":
            text.append(f"Trust the {request.name}?", style="bold")
            text.append(f"\n{request.summary.rstrip()}")
        else:
            text.append(f"Allow {request.name}?", style="bold")
            if request.task:
                text.append(f'  (from task "{request.task}")', style="italic")
            text.append(f"\n{request.summary.rstrip()}")
        if request.sandboxed is not None:
            sandbox = "runs in the sandbox" if request.sandboxed else "runs without a sandbox"
            text.append(f"\n{sandbox}", style="green" if request.sandboxed else "yellow")
        if request.why:
            text.append(f"\nasks because {request.why}", style="yellow")
        return text

    def _menu_text(self) -> Text:
        text = Text()
        items = SCOPES if self.choosing_scope else self.menu
        if self.choosing_scope and self.request is not None:
            text.append(f"Keep {self.request.rule}:\n", style="bold")
        for index, choice in enumerate(items):
            mark = "❯ " if index == self.highlighted else "  "
            style = "bold reverse" if index == self.highlighted and self.has_focus else ""
            text.append(f"{mark}{index + 1}. {choice.label}", style=style)
            if choice.letter:
                text.append(f"  ({choice.letter})", style="dim")
            text.append("\n")
        hint = f"1-{len(items)} or ↑↓ Enter"
        if self.choosing_scope:
            hint += " · Esc back"
        if self._scroll.display:
            hint += " · v " + ("less" if self.expanded else "view all") + " · PgUp/PgDn scroll"
        if not self.has_focus and not self.has_focus_within:
            hint = "Tab answers · what you type goes to the draft"
        text.append(hint, style="dim")
        if self.waiting:
            text.append(f"   ({self.waiting} more waiting)", style="dim")
        return text

    # ------------------------------------------------------------------ keys

    def takes(self, character: str, *, quiet: bool) -> bool:
        """Whether a printable key typed at the box is an answer (else it belongs to the draft):
        a number of the menu always; `y`, `a`, `n` and `v` only while the person is not typing."""
        if self.asking_reason:
            return False
        items = SCOPES if self.choosing_scope else self.menu
        if character.isdigit():
            return 1 <= int(character) <= len(items)
        if not quiet:
            return False
        if character == "v":
            return bool(self._scroll.display)
        return not self.choosing_scope and any(c.letter == character for c in self.menu)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("pick", "letter", "move", "pick_highlighted") and (
            self.request is None or self.asking_reason
        ):
            return None
        if action in ("expand", "scroll") and not self._scroll.display:
            return None
        return True

    def action_move(self, step: int) -> None:
        items = SCOPES if self.choosing_scope else self.menu
        self.highlighted = (self.highlighted + step) % len(items)
        self._redraw()

    def action_pick_highlighted(self) -> None:
        self.action_pick(self.highlighted)

    def action_letter(self, letter: str) -> None:
        index = next((i for i, c in enumerate(self.menu) if c.letter == letter), None)
        if index is not None and not self.choosing_scope:
            self.action_pick(index)

    def action_pick(self, index: int) -> None:
        request = self.request
        items = SCOPES if self.choosing_scope else self.menu
        if request is None or not 0 <= index < len(items):
            return
        choice = items[index]
        if choice.scopes:
            self.choosing_scope, self.highlighted = True, 0
            self._redraw()
            return
        if choice.reason:
            self._denying = choice
            self._reason.placeholder = choice.reason
            self.asking_reason = True
            self.screen.set_focus(self._reason)  # at once: the next key must find it
            return
        self.expanded = False
        self.post_message(
            self.Answered(
                request.request_id, choice.decision, None, keep=choice.keep, mode=choice.mode
            )
        )

    def back(self, *, refocus: bool = True) -> bool:
        """Esc: leave the scope choice or the reason; False when there was nothing to leave."""
        if self.asking_reason:
            self.asking_reason = False
            if refocus:
                self.screen.set_focus(self)
            return True
        if self.choosing_scope:
            self.choosing_scope, self.highlighted = False, 0
            self._redraw()
            return True
        return False

    def action_expand(self) -> None:
        self.expanded = not self.expanded

    def watch_expanded(self, expanded: bool) -> None:
        # The whole screen but the status bar and footer: the transcript steps aside.
        self.screen.set_class(expanded, "-approval-expanded")
        self._redraw()

    def action_scroll(self, lines: int) -> None:
        self._scroll.scroll_relative(y=lines, animate=False)

    def watch_asking_reason(self) -> None:
        self.refresh_bindings()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.request is not None and self._denying is not None:
            reason = event.value.strip() or None
            self.post_message(self.Answered(self.request.request_id, "deny", reason))
        self.asking_reason = False


def _preview(request: Approval, preview: str) -> RenderableType:
    # Rich's Markdown and Syntax bring markdown-it and Pygments: loaded at the first question,
    # not with the first frame.
    from rich.markdown import Markdown
    from rich.syntax import Syntax

    if request.kind == "plan":
        return Markdown(preview)
    if preview.startswith(("---", "@@", "diff ")):
        return render_diff(preview)
    if request.kind == "tool" and request.name == "shell":
        return Syntax(preview, "bash", theme="ansi_dark", word_wrap=True)
    return Text(preview)
