"""The transcript's block widgets: one widget per view-model block, updated in place.

Assistant text streams through Textual's `MarkdownStream` and the stream is always stopped when
the block ends. Thinking is dimmed and collapsible; a tool call is one collapsed line with a
status glyph, expandable to its output (edits show a highlighted diff); a retry counts down.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Markdown, Static

from tui_agent.session import split_attachments
from tui_agent.ui.view_model import (
    Block,
    MarkerBlock,
    RetryBlock,
    TextBlock,
    ThinkingBlock,
    ToolBlock,
    UserBlock,
)

TOOL_GLYPHS = {
    "queued": "◌",
    "awaiting_approval": "?",
    "running": "●",
    "detached": "◍",
    "done": "✓",
    "failed": "✗",
    "aborted": "⊘",
}
# Lines of output or diff shown when a tool block is expanded; the rest is summarised.
EXPANDED_LINES = 40
DIFF_AUTO_EXPAND_LINES = 24
SEGMENT_CHARS = 3000  # assistant text per Markdown widget before a long answer continues below
LIVE_SEGMENTS = 2  # the newest segments stay Markdown widgets; older ones are flattened


class StreamingMarkdown(Markdown):
    """Markdown fed fragment by fragment; fragments that arrive faster than frames coalesce."""

    def __init__(self, text: str = "", *, streaming: bool, classes: str = "") -> None:
        super().__init__(text, classes=classes)
        self._pending: list[str] = []
        self._wake = asyncio.Event()
        self._ended = not streaming
        self._pump: asyncio.Task[None] | None = None

    def on_mount(self) -> None:
        if not self._ended or self._pending:
            self._pump = asyncio.create_task(self._run())

    def feed(self, fragment: str) -> None:
        self._pending.append(fragment)
        self._wake.set()

    def end(self) -> None:
        self._ended = True
        self._wake.set()

    async def _run(self) -> None:
        stream = Markdown.get_stream(self)
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                if self._pending:
                    chunk = "".join(self._pending)
                    self._pending.clear()
                    await stream.write(chunk)
                if self._ended and not self._pending:
                    break
        finally:
            await stream.stop()

    async def on_unmount(self) -> None:
        if self._pump is not None and not self._pump.done():
            self._pump.cancel()


class UserPrompt(Static):
    """The user's words; what went with them (`@file`, `!command` output) shows as chips."""

    def __init__(self, block: UserBlock) -> None:
        label = {"prompt": "❯ ", "steer": "↳ steer: ", "notification": "✉ "}[block.via]
        words, sources = split_attachments(block.text)
        text = Text(label, style="bold")
        text.append(words)
        for source in sources:
            text.append(" ")
            text.append(f" {source} ", style="reverse dim")
        super().__init__(text, classes=f"block user -{block.via}", markup=False)


class _Segment(Widget):
    """One part of a long answer: a streaming Markdown widget, later one flat renderable."""

    DEFAULT_CSS = "_Segment { height: auto; }"

    def __init__(self, text: str, *, streaming: bool, flat: bool) -> None:
        super().__init__()
        self.text = text
        self.markdown = None if flat else StreamingMarkdown(text, streaming=streaming)

    def compose(self) -> ComposeResult:
        yield self.markdown if self.markdown is not None else _flat(self.text)

    def flatten(self) -> None:
        if self.markdown is None:
            return
        if not self.is_mounted:  # fed faster than it was mounted: once it is
            self.call_after_refresh(self.flatten)
            return
        self.markdown.remove()
        self.markdown = None
        self.mount(_flat(self.text))


class AssistantText(Widget):
    """Assistant text as a column of segments of bounded size.

    Every screen update re-arranges every mounted widget, and a Markdown widget is one widget
    per paragraph, list item or fence, so a long answer would slow each frame down as it grows.
    Instead it continues in a new Markdown segment at a paragraph break (outside a code fence)
    once the current one holds `SEGMENT_CHARS`, and segments `LIVE_SEGMENTS` back, long
    scrolled away while following the stream, are flattened into one widget each (Rich's
    Markdown renderer): the answer costs a handful of widgets however long it gets.
    """

    def __init__(self, block: TextBlock) -> None:
        super().__init__(classes="block assistant")
        self._composed = False
        texts = _split(block.text)
        self._segments = [
            _Segment(
                text,
                streaming=block.streaming and index == len(texts) - 1,
                flat=index < len(texts) - LIVE_SEGMENTS,
            )
            for index, text in enumerate(texts)
        ]

    @property
    def texts(self) -> list[str]:
        return [segment.text for segment in self._segments]

    def compose(self) -> ComposeResult:
        # Segments added before this point are composed here; later ones are mounted.
        self._composed = True
        yield from self._segments

    def _add_segment(self, segment: _Segment) -> None:
        self._segments.append(segment)
        if self._composed:
            self._mount_in_order(segment)

    def _mount_in_order(self, segment: _Segment) -> None:
        if self.is_mounted:
            self.mount(segment)
        else:
            self.call_after_refresh(self._mount_in_order, segment)

    def feed(self, fragment: str) -> None:
        live = self._segments[-1]
        assert live.markdown is not None
        # Only a break that arrives with this fragment can end the segment (what came before
        # is already on screen).
        cut = _segment_cut(live.text + fragment, since=max(0, len(live.text) - 1))
        if cut is None:
            live.text += fragment
            live.markdown.feed(fragment)
            return
        head = cut - len(live.text)
        live.text += fragment[:head]
        live.markdown.feed(fragment[:head])
        live.markdown.end()
        segment = _Segment("", streaming=True, flat=False)
        self._add_segment(segment)
        segment.text = fragment[head:]
        assert segment.markdown is not None
        segment.markdown.feed(segment.text)
        if len(self._segments) > LIVE_SEGMENTS:
            self._segments[-1 - LIVE_SEGMENTS].flatten()

    def end(self) -> None:
        markdown = self._segments[-1].markdown
        if markdown is not None:
            markdown.end()


def _flat(text: str) -> Static:
    from rich.markdown import Markdown as RichMarkdown  # only long answers need it

    return Static(RichMarkdown(text, code_theme="monokai"), classes="flat", markup=False)


def _split(text: str) -> list[str]:
    parts: list[str] = []
    while (cut := _segment_cut(text, since=0)) is not None:
        parts.append(text[:cut])
        text = text[cut:]
    return [*parts, text]


def _segment_cut(text: str, *, since: int) -> int | None:
    """Where a segment of `text` may end: the last paragraph break at or after `since` (and
    past half of `SEGMENT_CHARS`) outside a code fence, or None while the segment is short."""
    if len(text) < SEGMENT_CHARS:
        return None
    start = max(since, SEGMENT_CHARS // 2)
    at = text.rfind("\n\n", start)
    while at != -1:
        if text.count("```", 0, at) % 2 == 0:
            return at + 2
        at = text.rfind("\n\n", start, at)
    return None


class Thinking(Widget, can_focus=True):
    """Dimmed reasoning, folded to its first lines; Enter or a click unfolds it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_open", "Fold", show=False)
    ]
    expanded: var[bool] = var(False, toggle_class="-expanded")

    def __init__(self, block: ThinkingBlock) -> None:
        super().__init__(classes="block thinking")
        self._body = StreamingMarkdown(block.text, streaming=block.streaming, classes="body")
        self._title = Static("▸ thinking", classes="title", markup=False)

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._body

    def feed(self, fragment: str) -> None:
        self._body.feed(fragment)

    def end(self) -> None:
        self._body.end()

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
    call opens its sub-agent's transcript instead."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_open", "Expand", show=False)
    ]
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
            or (diff is not None and diff.count("\n") < DIFF_AUTO_EXPAND_LINES)
        ):
            self._auto_expanded = True
            self.expanded = True
        self._header.update(self._header_text())
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
            count = block.output.count("\n") + 1
            text.append(f"  ({count} line{'s' if count != 1 else ''})", style="dim")
        if block.state == "aborted":
            text.append("  stopped", style="dim")
        if block.name == "task":
            text.append("  (Enter: the sub-agent's transcript)", style="dim")
        return text

    def _body_renderable(self) -> Syntax | Text:
        block = self.block
        diff = block.diff
        if diff is not None:
            return Syntax(_head(diff), "diff", theme="ansi_dark", word_wrap=True)
        if not block.output:
            return Text("(no output yet)", style="dim")
        return Text(_head(block.output), style="red" if block.is_error else "")

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
