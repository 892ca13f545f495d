"""The transcript's block widgets: one widget per view-model block, updated in place.

Assistant text and thinking stream into a `MarkdownView` (one widget, drawn block by block).
Thinking is dimmed and collapsible; a tool call is one collapsed line with a status glyph,
expandable to its output (edits show a highlighted diff); a retry counts down.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Static

from tui_agent.ui.state import (
    Block,
    MarkerBlock,
    RetryBlock,
    TextBlock,
    ThinkingBlock,
    ToolBlock,
    UserBlock,
)
from tui_agent.ui.view_model import USER_COMMAND
from tui_agent.ui.widgets.markdown_view import MarkdownView

if TYPE_CHECKING:  # Rich's Syntax brings Pygments: loaded with the first diff shown
    from rich.syntax import Syntax

TOOL_GLYPHS = {
    "queued": "◌",
    "awaiting_approval": "?",
    "running": "●",
    "detached": "◍",
    # the final ones: a call's `ToolStatus`
    "done": "✓",
    "failed": "✗",
    "denied": "⊗",
    "aborted": "⊘",
}
# What a row says after its name when the glyph alone is not plain enough.
FINAL_WORDS = {"denied": "denied", "aborted": "stopped"}
# Lines of output or diff shown when a tool block is expanded; the rest is summarised.
EXPANDED_LINES = 40
DIFF_AUTO_EXPAND_LINES = 24


class UserPrompt(Static):
    """The user's words; what went with them (`@file`, `!command` output) shows as chips."""

    def __init__(self, block: UserBlock) -> None:
        from tui_agent.session import split_attachments  # with the first prompt shown

        label = {"prompt": "❯ ", "steer": "↳ steer: ", "notification": "✉ "}[block.via]
        words, sources = split_attachments(block.text)
        text = Text(label, style="bold")
        text.append(words)
        for source in sources:
            append_chip(text, source)
        super().__init__(text, classes=f"block user -{block.via}", markup=False)


def append_chip(text: Text, label: str) -> None:
    """What went with a prompt or came with a result (a file, an image), as a chip."""
    text.append(" ")
    text.append(f" {label} ", style="reverse dim")


class AssistantText(MarkdownView):
    """The assistant's answer, streamed into one `MarkdownView`."""

    def __init__(self, block: TextBlock) -> None:
        super().__init__(block.text, classes="block assistant")


class Thinking(Widget, can_focus=True):
    """Dimmed reasoning, folded to its first lines; Enter or a click unfolds it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "toggle_open", "Fold", show=False)]
    expanded: var[bool] = var(False, toggle_class="-expanded")

    def __init__(self, block: ThinkingBlock) -> None:
        super().__init__(classes="block thinking")
        self._body = MarkdownView(block.text, classes="body")
        self._title = Static("▸ thinking", classes="title", markup=False)

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._body

    @property
    def length(self) -> int:
        return self._body.length

    def append(self, fragment: str) -> None:
        self._body.append(fragment)

    def watch_expanded(self, expanded: bool) -> None:
        self._title.update("▾ thinking" if expanded else "▸ thinking")

    def action_toggle_open(self) -> None:
        self.expanded = not self.expanded

    def on_click(self, event: events.Click) -> None:
        self.action_toggle_open()


class ShowSubagent(Message):
    """Show the transcript of the sub-agent that the `task` call `call_id` started."""

    def __init__(self, call_id: str, title: str) -> None:
        super().__init__()
        self.call_id = call_id
        self.title = title


class ToolCallBlock(Widget, can_focus=True):
    """One line per call (glyph, name, what it does); expands to the output or diff. A `task`
    call opens its sub-agent's transcript instead. The person's own `!command` is shown open,
    its newest lines, since running it was to see them."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "toggle_open", "Expand", show=False)]
    expanded: var[bool] = var(False, toggle_class="-expanded")

    def __init__(self, block: ToolBlock) -> None:
        super().__init__(classes="block tool")
        self.block = block
        self._header = Static("", classes="header", markup=False)
        self._body = Static("", classes="body", markup=False)
        self._auto_expanded = False

    def compose(self) -> ComposeResult:
        yield self._header
        yield self._body

    def on_mount(self) -> None:
        self.refresh_block()

    def refresh_block(self) -> None:
        block = self.block
        self.set_class(True, f"-{block.state}")
        for state in TOOL_GLYPHS:
            if state != block.state:
                self.set_class(False, f"-{state}")
        diff = block.diff
        if not self._auto_expanded and (
            block.state == "failed"
            or block.name == USER_COMMAND
            or (diff is not None and diff.count("\n") < DIFF_AUTO_EXPAND_LINES)
        ):
            self._auto_expanded = True
            self.expanded = True
        # The header is one row (`text-wrap: nowrap`): a new one needs no layout of the screen,
        # and a task's header changes at each call of its sub-agent.
        header = self._header_text()
        self._header.update(header, layout="\n" in header.plain)
        if self.expanded:
            self._body.update(self._body_renderable())

    def _header_text(self) -> Text:
        block = self.block
        text = Text()
        text.append(f"{TOOL_GLYPHS.get(block.state, '·')} ", style="bold")
        text.append(block.name, style="bold")
        summary = block.summary
        if summary:
            text.append(f"  {summary}")
        diff = block.diff
        if diff is not None:
            lines = diff.splitlines()
            added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
            removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
            text.append(f"  +{added} −{removed}", style="dim")
        elif block.output and not self.expanded:
            text.append(f"  ({block.line_count})", style="dim")
        for image in (block.display or {}).get("images") or ():
            append_chip(text, str(image))
        exit_code = (block.display or {}).get("exit_code")
        if isinstance(exit_code, int) and exit_code != 0:
            text.append(f"  exit {exit_code}", style="bold")
        if block.state in FINAL_WORDS:
            text.append(f"  {FINAL_WORDS[block.state]}", style="dim")
        if block.name == "task":
            text.append("  (Enter: the sub-agent's transcript)", style="dim")
        return text

    def _body_renderable(self) -> Syntax | Text:
        block = self.block
        diff = block.diff
        if diff is not None:
            from rich.syntax import Syntax

            return Syntax(_head(diff), "diff", theme="ansi_dark", word_wrap=True)
        if not block.output:
            return Text("(no output yet)", style="dim")
        shown = _tail(block.output) if block.name == USER_COMMAND else _head(block.output)
        return Text(shown, style="red" if block.is_error else "")

    def watch_expanded(self, expanded: bool) -> None:
        if expanded:
            self._body.update(self._body_renderable())
        self._header.update(self._header_text())

    def action_toggle_open(self) -> None:
        if self.block.name == "task":
            self.post_message(ShowSubagent(self.block.call_id, self.block.summary))
        else:
            self.expanded = not self.expanded

    def on_click(self, event: events.Click) -> None:
        self.action_toggle_open()


class RetryNotice(Static):
    """`⟳ HTTP 500 · reason: retrying in 3s (attempt 2/5)`, counting down; one line per step,
    updated at each further failure."""

    def __init__(self, block: RetryBlock, clock: Callable[[], float]) -> None:
        super().__init__("", classes="block retry", markup=False)
        self.block = block
        self._clock = clock

    def on_mount(self) -> None:
        self.refresh_block()
        if not self.block.resolved:
            self._timer = self.set_interval(0.5, self.refresh_block)

    def refresh_block(self) -> None:
        block = self.block
        attempt = f"attempt {block.attempt}/{block.max_attempts}"
        failed = "failed once" if block.failures == 1 else f"failed {block.failures} times"
        if block.resolved:
            self.update(Text(f"⟳ {block.reason} ({failed}; retried up to {attempt})", style="dim"))
            if hasattr(self, "_timer"):
                self._timer.stop()
            return
        left = max(0.0, block.deadline - self._clock())
        self.update(Text(f"⟳ {block.reason}: retrying in {left:.0f}s ({attempt})"))


class Marker(Static):
    GLYPHS: ClassVar[dict[str, str]] = {
        "interrupted": "■ ",
        "compacted": "⇣ ",
        "notice": "ℹ ",
        "info": "",
        "warning": "⚠ ",
        "error": "✗ ",
        "stopped": "■ ",
        "welcome": "",
    }

    def __init__(self, block: MarkerBlock) -> None:
        super().__init__(
            Text(self.GLYPHS[block.kind] + block.text),
            classes=f"block marker -{block.kind}",
            markup=False,
        )


def make_block_widget(block: Block, clock: Callable[[], float]) -> Widget:
    match block:
        case UserBlock():
            return UserPrompt(block)
        case TextBlock():
            return AssistantText(block)
        case ThinkingBlock():
            return Thinking(block)
        case ToolBlock():
            return ToolCallBlock(block)
        case RetryBlock():
            return RetryNotice(block, clock)
        case MarkerBlock():
            return Marker(block)


def _head(text: str) -> str:
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= EXPANDED_LINES:
        return "\n".join(lines)
    hidden = len(lines) - EXPANDED_LINES
    return "\n".join([*lines[:EXPANDED_LINES], f"… {hidden} more lines"])


def _tail(text: str) -> str:
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= EXPANDED_LINES:
        return "\n".join(lines)
    hidden = len(lines) - EXPANDED_LINES
    return "\n".join([f"… {hidden} earlier lines", *lines[-EXPANDED_LINES:]])
