"""The transcript: a scrolling column of block widgets that follows the tail while streaming.

It keeps at most `MAX_MOUNTED` block widgets; older ones are unmounted in batches while the view
follows the tail, and a line at the top offers them back (click it or press Home), re-created
from the view model, so the whole session stays reachable without a widget per block.

While the user types, streamed text is drawn at most `TYPING_FRAME_S` apart instead of in every
frame: the frame that shows a key then seldom has an answer to draw as well (typing during a
fast stream, p50, fell from 2.6x to about 1x the cost of a key with nothing streaming).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from tui_agent.ui.view_model import (
    Block,
    BlockAdded,
    BlockRemoved,
    BlockUpdated,
    Change,
    Reset,
    StreamEnded,
    TextAppended,
    TextBlock,
    ThinkingBlock,
    ViewModel,
)
from tui_agent.ui.widgets.blocks import (
    AssistantText,
    RetryNotice,
    Thinking,
    ToolCallBlock,
    make_block_widget,
)
from tui_agent.ui.widgets.one_layout import LaidOutOnce

# Every layout change (even the input growing a line) re-arranges every mounted widget: keep
# the mounted window small, re-create on demand.
MAX_MOUNTED = 60
PRUNE_BATCH = 20
TYPING_PAUSE_S = 0.5  # a key this recently: the user is typing
TYPING_FRAME_S = 0.05  # while typing, streamed text is drawn at most this often (20 a second)


class EarlierBlocks(Static):
    """The top line when older blocks are not mounted: says how many, click to show them."""

    def __init__(self) -> None:
        super().__init__("", classes="earlier", markup=False)

    def show_count(self, hidden: int) -> None:
        self.display = hidden > 0
        self.update(Text(f"▲ {hidden} earlier blocks: Home or click to show", style="dim"))

    def on_click(self, event: events.Click) -> None:
        transcript = self.parent
        if isinstance(transcript, Transcript):
            transcript.show_earlier()


class Transcript(LaidOutOnce, VerticalScroll, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("end", "follow", "Follow", show=False),
        Binding("home", "top", "Top", show=False),
    ]

    def __init__(self, vm: ViewModel, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.vm = vm
        self._widgets: dict[int, Widget] = {}
        self._earlier = EarlierBlocks()
        self._changes: list[Change] = []  # taken, not drawn yet (see `take`)
        self._redrawing = False
        self._typed_at: float | None = None  # by the view model's clock
        self._streamed_at = float("-inf")  # when streamed text was last drawn
        self._held: dict[int, TextBlock | ThinkingBlock] = {}  # blocks with text not drawn yet
        self._holding = False  # a timer will draw the held text

    def on_mount(self) -> None:
        self.mount(self._earlier)
        self._earlier.display = False
        self.redraw()
        self.anchor()

    # ------------------------------------------------------------ view-model changes

    class _Pending(Message):
        """View-model changes are waiting in `Transcript._changes`."""

    class DrawFailed(Message):
        """Drawing a change raised: the app reports it (the transcript goes on with the next)."""

        def __init__(self, what: str, error: Exception) -> None:
            super().__init__()
            self.what = what
            self.error = error

    @property
    def settled(self) -> bool:
        """Every change taken so far is drawn (a redraw has mounted all it shows)."""
        return not self._changes and not self._redrawing and not self._held

    @property
    def holding(self) -> bool:
        """Streamed text waits while the user types (see the module)."""
        return bool(self._held)

    def typed(self) -> None:
        """A key was pressed."""
        self._typed_at = self.vm.clock()

    def take(self, change: Change) -> None:
        """Queue a view-model change; it is drawn from the transcript's own message queue, so
        streaming and mounting never hold up the app's (where the keys arrive)."""
        self._changes.append(change)
        if len(self._changes) == 1:
            self.post_message(self._Pending())

    @on(_Pending)
    async def _draw_pending(self) -> None:
        while self._changes:
            change = self._changes[0]
            try:
                await self.apply(change)
            except Exception as error:
                what = f"drawing a {type(change).__name__} change failed"
                self.post_message(self.DrawFailed(what, error))
            finally:
                del self._changes[0]

    async def apply(self, change: Change) -> None:
        match change:
            case BlockAdded():
                await self._mount_block(change.block)
            case TextAppended() | StreamEnded():
                self._catch_up(change.block)
            case BlockUpdated():
                widget = self._widgets.get(change.block.id)
                if isinstance(widget, ToolCallBlock | RetryNotice):
                    widget.refresh_block()
            case BlockRemoved():
                widget = self._widgets.pop(change.block.id, None)
                if widget is not None:
                    _remove(widget)
            case Reset():
                self.redraw()
            case _:
                pass

    def redraw(self) -> None:
        """Show the newest blocks of the view model instead of whatever was shown.

        They are mounted newest first, one block at a time (`_mount_newest_first`), so a long
        resumed session shows its end at once and never holds the event loop for long."""
        for widget in self._widgets.values():
            _remove(widget)
        newest = self.vm.blocks[-PRUNE_BATCH:]
        shown = [(block, make_block_widget(block, self.vm.clock)) for block in newest]
        self._widgets = {block.id: widget for block, widget in shown}
        self._earlier.show_count(len(self.vm.blocks) - len(newest))
        self.anchor()
        self._redrawing = True
        self.run_worker(self._mount_newest_first(shown), group="redraw", exclusive=True)

    async def _mount_newest_first(self, shown: list[tuple[Block, Widget]]) -> None:
        above: Widget | None = None
        for block, widget in reversed(shown):
            if self._widgets.get(block.id) is not widget:
                continue  # removed (or redrawn) meanwhile
            if above is None:
                await self.mount(widget, after=self._earlier)
            else:
                await self.mount(widget, before=above)
            above = widget
            if isinstance(block, TextBlock | ThinkingBlock):
                self._catch_up(block)
        self._redrawing = False

    def _catch_up(self, block: TextBlock | ThinkingBlock) -> None:
        """Stream what the block's text gained since its widget last took some, or hold it
        while the user types (see the module)."""
        if block.id in self._held:
            return  # drawn with the rest of the held text
        if self._hold():
            self._held[block.id] = block
            return
        self._streamed_at = self.vm.clock()
        self._append_new(block)

    def _hold(self) -> bool:
        """Whether streamed text must wait now; if so, a timer draws it later."""
        now = self.vm.clock()
        typing = self._typed_at is not None and 0 <= now - self._typed_at < TYPING_PAUSE_S
        if not typing or not 0 <= now - self._streamed_at < TYPING_FRAME_S:
            return False  # (a clock set back holds nothing)
        if not self._holding:
            self._holding = True
            self.set_timer(TYPING_FRAME_S, self._draw_held)
        return True

    def _draw_held(self) -> None:
        self._holding = False
        if self._hold():
            return  # not a frame's time yet by the app's clock (a test's, or a timer early)
        held, self._held = self._held, {}
        self._streamed_at = self.vm.clock()
        for block in held.values():
            self._append_new(block)

    def _append_new(self, block: TextBlock | ThinkingBlock) -> None:
        """Changes are shown after the fact, so the widget may have been built from text that a
        queued `TextAppended` also carries: the count of characters shown keeps each one shown
        once."""
        widget = self._widgets.get(block.id)
        if not isinstance(widget, AssistantText | Thinking) or not widget.is_mounted:
            return  # a redraw mounts it later, and catches up then
        new = block.text[widget.length :]
        if new:
            widget.append(new)

    async def _mount_block(self, block: Block) -> None:
        if block.id in self._widgets:
            return  # a redraw drew it already (it was in the view model by then)
        widget = make_block_widget(block, self.vm.clock)
        self._widgets[block.id] = widget
        await self.mount(widget)
        if len(self._widgets) > MAX_MOUNTED and self.following:
            self._prune()

    # ------------------------------------------------------------ pruning and restoring

    @property
    def following(self) -> bool:
        return self.is_anchored and not self._anchor_released

    @property
    def hidden_count(self) -> int:
        if not self._widgets:
            return len(self.vm.blocks)
        first = next(iter(self._widgets))
        return next((i for i, b in enumerate(self.vm.blocks) if b.id == first), 0)

    def _prune(self) -> None:
        oldest = list(self._widgets)[:PRUNE_BATCH]
        with self.app.batch_update():
            for block_id in oldest:
                _remove(self._widgets.pop(block_id))
        self._earlier.show_count(self.hidden_count)

    def show_earlier(self) -> None:
        """Re-create the batch of blocks just above the first one shown."""
        hidden = self.hidden_count
        if hidden == 0:
            return
        start = max(0, hidden - PRUNE_BATCH)
        blocks = self.vm.blocks[start:hidden]
        widgets = [make_block_widget(block, self.vm.clock) for block in blocks]
        restored = dict(zip((b.id for b in blocks), widgets, strict=True))
        self._widgets = {**restored, **self._widgets}
        with self.app.batch_update():
            self.mount_all(widgets, after=self._earlier)
        self._earlier.show_count(start)

    # ------------------------------------------------------------ keys

    def action_follow(self) -> None:
        # Anchor again rather than trusting the released anchor to re-engage (textual#6677).
        self.anchor()

    def page(self, pages: int) -> None:
        """Scroll by whole pages at once, not after the next refresh: a burst of PageUp presses
        keeps going instead of each starting from the same place. Up releases the anchor."""
        height = self.scrollable_content_region.height
        self.scroll_to(y=self.scroll_y + pages * height, animate=False, immediate=True)

    def action_top(self) -> None:
        self.show_earlier()
        self.scroll_home(animate=False)


def _remove(widget: Widget) -> None:
    if widget.parent is not None:  # a redraw mounts newest first: older ones may not be yet
        widget.remove()
