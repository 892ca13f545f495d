"""The transcript's block widgets: one widget per view-model block, updated in place.

Assistant text streams through Textual's `MarkdownStream` and the stream is always stopped when
the block ends; a long answer is a column of bounded Markdown segments (see `AssistantText`).
Thinking is dimmed and collapsible; a tool call is one collapsed line with a status glyph,
expandable to its output (edits show a highlighted diff); a retry counts down.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.await_remove import AwaitRemove
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

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
SEGMENT_CHARS = 800  # assistant text per Markdown widget before a long answer continues below


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
    """One part of a long answer: a Markdown widget, or, while it is far from the viewport, a
    blank of the same height ("parked") that is rebuilt from the same text when it comes back."""

    DEFAULT_CSS = "_Segment { height: auto; }"

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.markdown: Markdown | None = Markdown(text)
        self._built = False  # the Markdown has mounted every block of its text
        self.streamed = False  # the Markdown was built piece by piece, as the text streamed
        self._seen_height = 0
        self._parked_height = 0
        self.parked_width = 0  # the width its parked height was measured at

    def compose(self) -> ComposeResult:
        if self.markdown is not None:
            yield self.markdown

    @property
    def parked(self) -> bool:
        return self.markdown is None

    @property
    def drawn(self) -> bool:
        """Its Markdown is built and laid out (not parked, not rebuilding)."""
        return self.markdown is not None and _laid_out(self.markdown)

    def render(self) -> str:
        return ""  # a parked segment is blank

    def on_markdown_table_of_contents_updated(self, event: Markdown.TableOfContentsUpdated) -> None:
        # Posted once the Markdown has mounted the blocks of its text (an update ends with it).
        self._built = self._built or event.markdown is self.markdown

    def park(self) -> None:
        """Swap the Markdown for a blank of its height, once that height is known: all its
        blocks are built and laid out, and the height was the same at the previous cull.
        A streamed Markdown is built again from the whole text first: it may still be catching
        up (a list whose last items are not mounted yet), so its height is not one to trust."""
        markdown = self.markdown
        if markdown is not None and self.streamed:
            self.streamed = False
            self.call_later(self._forget, markdown.remove())
            self._build()
            return
        height = self.outer_size.height
        seen, self._seen_height = self._seen_height, height
        if markdown is None or not self._built or height != seen or not _laid_out(markdown):
            return
        self.call_later(self._forget, markdown.remove())
        self.markdown = None
        self._parked_height = height
        self.parked_width = self.outer_size.width
        self.refresh(layout=True)

    async def _forget(self, removal: AwaitRemove) -> None:
        """Once the Markdown is gone, drop what Textual's caches in this segment still hold of
        it: the last arrangement and the lists of displayed children keep its whole tree alive
        (the segment is not arranged again while parked), so memory and the collector's
        pauses would grow with every segment parked."""
        await removal
        self._clear_arrangement_cache()
        # Reading the displayed-children lists recomputes them, dropping the stale ones.
        len(self.displayed_children)
        len(self.displayed_and_visible_children)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        # The answer's `stream` layout measures content only (it ignores a `height` style).
        # A rebuilt segment keeps its parked height until its Markdown is laid out again, so
        # nothing below it moves while it builds.
        markdown = self.markdown
        height = 0 if markdown is None else super().get_content_height(container, viewport, width)
        if self._parked_height and self.drawn:
            self._parked_height = 0
        return max(height, self._parked_height)

    @property
    def stale(self) -> bool:
        """It is parked at another width than it has now, so its parked height is wrong."""
        return self.parked and self.outer_size.width != self.parked_width

    def unpark(self) -> None:
        """Rebuild the Markdown; its parked height stands in until it is laid out, unless it
        was measured at another width."""
        if self.markdown is None:
            if self.stale:
                self._parked_height = 0
            self._build()

    def _build(self) -> None:
        self.markdown = Markdown(self.text)
        self._built = False
        self._seen_height = 0
        self.mount(self.markdown)


class AssistantText(Widget):
    """Assistant text as a column of Markdown segments of bounded size.

    Every layout places every mounted widget, and a Markdown widget is several widgets per
    paragraph, list item, table or fence, so a long answer would make each frame slower as it
    grows. Instead the text continues in a new segment at the first paragraph break (outside a
    code fence) once a segment holds `SEGMENT_CHARS`, and a finished segment far from the viewport
    is parked (`cull`): the answer costs a bounded number of widgets however long it gets, and
    what is on screen is always the same Markdown widget built from the same text.
    Text streams through Textual's `MarkdownStream`, which coalesces fragments that arrive faster
    than it can append them; the stream is stopped when the block ends.
    """

    def __init__(self, block: TextBlock) -> None:
        super().__init__(classes="block assistant")
        self._segments = [_Segment(text) for text in split_segments(block.text)]
        self._stream: MarkdownStream | None = None
        self.shown = len(block.text)  # characters of the block's text this widget holds

    @property
    def texts(self) -> list[str]:
        return [segment.text for segment in self._segments]

    @property
    def segments(self) -> list[_Segment]:
        return list(self._segments)

    def compose(self) -> ComposeResult:
        yield from self._segments

    async def write(self, fragment: str) -> None:
        self.shown += len(fragment)
        await self._write(fragment)

    async def _write(self, fragment: str) -> None:
        live = self._segments[-1]
        cut = _segment_cut(live.text, fragment)
        head, rest = (fragment, "") if cut is None else (fragment[:cut], fragment[cut:])
        live.text += head
        await self._live_stream().write(head)
        if cut is None:
            return
        await self.end()
        segment = _Segment("")
        self._segments.append(segment)
        await self.mount(segment)
        if rest:
            await self._write(rest)

    def _live_stream(self) -> MarkdownStream:
        if self._stream is None:
            live = self._segments[-1]
            live.streamed = True
            markdown = live.markdown
            assert markdown is not None  # the live segment is never parked
            self._stream = Markdown.get_stream(markdown)
        return self._stream

    async def end(self) -> None:
        """Stop the live segment's stream. The segment stays live (never parked) until the
        stream's last append is in: parking it earlier would unmount the Markdown under it."""
        if self._stream is not None:
            try:
                await self._stream.stop()
            finally:
                self._stream = None

    def cull(self, top: int, bottom: int) -> bool:
        """Park the finished segments outside rows `top`..`bottom` (of this widget's content),
        rebuild those inside, and those parked at another width (their height is stale);
        True while one that should be parked is not yet (its height is still settling)."""
        live = self._segments[-1] if self._stream is not None else None
        waiting = False
        for segment in self._segments:
            region = segment.virtual_region
            if (top <= region.bottom and region.y <= bottom) or segment.stale:
                segment.unpark()
            elif segment is not live and region.height:
                segment.park()
                waiting = waiting or not segment.parked
        return waiting


def _laid_out(markdown: Markdown) -> bool:
    """Its blocks are built and placed: each has a width (a block may be 0 rows high)."""
    blocks = markdown.children
    return bool(blocks) and markdown.outer_size.height > 0 and all(b.size.width for b in blocks)


def split_segments(text: str) -> list[str]:
    """`text` cut where streaming it would have cut it (`_segment_cut`), so a redrawn answer is
    built from the same segments as the streamed one and looks the same."""
    parts: list[str] = []
    while (cut := _segment_cut("", text)) is not None:
        parts.append(text[:cut])
        text = text[cut:]
    return [*parts, text]


def _segment_cut(text: str, fragment: str) -> int | None:
    """Where in `fragment` the segment holding `text` ends: just after the first paragraph break
    outside a code fence that ends at or past `SEGMENT_CHARS`; None when it goes on."""
    whole = text + fragment
    if len(whole) < SEGMENT_CHARS:
        return None
    at = whole.find("\n\n", max(len(text) - 1, SEGMENT_CHARS - 2))
    while at != -1:
        if whole.count("```", 0, at) % 2 == 0:
            return at + 2 - len(text)
        at = whole.find("\n\n", at + 1)
    return None


class Thinking(Widget, can_focus=True):
    """Dimmed reasoning, folded to its first lines; Enter or a click unfolds it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_open", "Fold", show=False)
    ]
    expanded: var[bool] = var(False, toggle_class="-expanded")

    def __init__(self, block: ThinkingBlock) -> None:
        super().__init__(classes="block thinking")
        self._body = Markdown(block.text, classes="body")
        self._title = Static("▸ thinking", classes="title", markup=False)
        self._stream: MarkdownStream | None = None
        self.shown = len(block.text)  # characters of the block's text this widget holds

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._body

    async def write(self, fragment: str) -> None:
        self.shown += len(fragment)
        if self._stream is None:
            self._stream = Markdown.get_stream(self._body)
        await self._stream.write(fragment)

    async def end(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

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
