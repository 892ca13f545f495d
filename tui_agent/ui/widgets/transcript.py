"""The transcript: a scrolling column of block widgets that follows the tail while streaming.

It keeps a window of at most about `MAX_MOUNTED` block widgets over the view model's blocks;
older ones are unmounted in batches while the view follows the tail. A line at the top says how
many blocks are parked above (click it for another batch), and one at the bottom, when the
window is not at the end, how many below. Home moves the window to the very start of the
session, End back to the end, and `reveal` to any block (transcript search): parked blocks are
re-created from the view model, so the whole session stays reachable without a widget per block.

While the user types, streamed text waits for the moment just after a key's echo is painted
(`key_painted`), at most `TYPING_FRAME_S`, instead of being drawn in every frame: the frame that
shows a key then has no answer to draw as well (typing during a fast stream, p50, fell from 2.6x
to about 1x the cost of a key with nothing streaming), and the answer's frame falls in the gap
before the next key instead of at any moment, where a key typed meanwhile waited behind it.

While the user types, full garbage collections wait too (`ui/gc_pacing.py`): one took up to
100 ms of CPU while a long answer streamed, and a key that came meanwhile waited for it.

It listens to its view model itself (every change but the panes'), from its construction on.
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

from tui_agent.ui._textual_hooks import anchor_released, release_anchor_here
from tui_agent.ui.gc_pacing import TypingCollections
from tui_agent.ui.state import (
    Block,
    BlockAdded,
    BlockRemoved,
    BlockUpdated,
    Change,
    PaneChanged,
    Reset,
    StreamEnded,
    TextAppended,
    TextBlock,
    ThinkingBlock,
    ToolBlock,
)
from tui_agent.ui.view_model import ViewModel
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
TYPING_FRAME_S = 0.25  # while typing, streamed text waits at most this long (see the module)


class ParkedBlocks(Static):
    """The line above (or below) the window when blocks there are not mounted: says how many;
    a click shows another batch."""

    def __init__(self, *, later: bool) -> None:
        super().__init__("", classes="earlier", markup=False)
        self.later = later

    def show_count(self, hidden: int) -> None:
        self.display = hidden > 0
        if self.later:
            text = f"▼ {hidden} later blocks: click or PageDown for more, End for the end"
        else:
            text = f"▲ {hidden} earlier blocks: click for more, Home for the start"
        self.update(Text(text, style="dim"))

    class Clicked(Message):
        """Show another batch of the parked blocks (`later`: those below)."""

        def __init__(self, later: bool) -> None:
            super().__init__()
            self.later = later

    def on_click(self, event: events.Click) -> None:
        self.post_message(self.Clicked(self.later))


class Transcript(LaidOutOnce, VerticalScroll, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("end,ctrl+end", "follow", "Follow", show=False),
        Binding("home,ctrl+home", "top", "Top", show=False),
    ]

    def __init__(self, vm: ViewModel, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.vm = vm
        self._widgets: dict[int, Widget] = {}  # the window: consecutive blocks, oldest first
        self._at_end = True  # the window reaches the last block: new blocks are mounted
        self._earlier = ParkedBlocks(later=False)
        self._later = ParkedBlocks(later=True)
        self._found: int | None = None  # the block a transcript search points at
        self._opened: ToolCallBlock | Thinking | None = None  # unfolded by the search
        self._changes: list[Change] = []  # taken, not drawn yet (see `take`)
        self._redrawing = False
        self._typed_at: float | None = None  # by the view model's clock
        self._streamed_at = float("-inf")  # when streamed text was last drawn
        self._held: dict[int, TextBlock | ThinkingBlock] = {}  # blocks with text not drawn yet
        self._holding = False  # a timer will draw the held text
        self._collections = TypingCollections(vm.clock, self.set_timer)
        self._stop_listening = vm.listen(self._on_change)

    def _on_change(self, change: Change) -> None:
        if not isinstance(change, PaneChanged):
            self.take(change)

    def on_unmount(self) -> None:
        self._stop_listening()
        self._collections.release()

    @on(ParkedBlocks.Clicked)
    async def _on_parked_clicked(self, message: ParkedBlocks.Clicked) -> None:
        if message.later:
            await self.show_later()
        else:
            self.show_earlier()

    def on_mount(self) -> None:
        self.mount(self._earlier, self._later)
        self._earlier.display = False
        self._later.display = False
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
        self._collections.typed()

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
                self._show_counts()
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
        self._at_end = True
        self._show_counts()
        self.anchor()
        self._redrawing = True
        self.run_worker(self._mount_newest_first(shown), group="redraw", exclusive=True)

    def show_scrollbar_while_redrawing(self) -> None:
        """The vertical scrollbar shown until the next redraw has mounted its blocks, so that
        they are laid out at one width (a long session's newest blocks overflow the screen:
        the scrollbar would appear after the first of them, and each would be laid out again)."""
        self.styles.overflow_y = "scroll"

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
        self.styles.overflow_y = "auto"  # as before (`show_scrollbar_while_redrawing`)

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
        """Whether streamed text must wait now; if so, a timer draws it at the latest."""
        now = self.vm.clock()
        typing = self._typed_at is not None and 0 <= now - self._typed_at < TYPING_PAUSE_S
        if not typing or not 0 <= now - self._streamed_at < TYPING_FRAME_S:
            return False  # (a clock set back holds nothing)
        if not self._holding:
            self._holding = True
            self.set_timer(self._streamed_at + TYPING_FRAME_S - now, self._held_due)
        return True

    def _held_due(self) -> None:
        self._holding = False
        if self._held and not self._hold():  # (a test's clock, or a timer early, holds on)
            self._draw_held()

    def key_painted(self) -> None:
        """A key's echo is on the screen: the text held meanwhile is drawn now."""
        self._collections.key_painted()
        if self._held:
            self._draw_held()

    def _draw_held(self) -> None:
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
        if not self._at_end:
            self._show_counts()  # parked below the window until the person comes back down
            return
        widget = make_block_widget(block, self.vm.clock)
        self._widgets[block.id] = widget
        await self.mount(widget, before=self._later)
        if len(self._widgets) > MAX_MOUNTED and self.following:
            self._prune()

    # ------------------------------------------------------------ the window

    @property
    def following(self) -> bool:
        return self.is_anchored and not anchor_released(self)

    @property
    def hidden_count(self) -> int:
        """Blocks parked above the window."""
        if not self._widgets:
            return len(self.vm.blocks)
        return self._index(next(iter(self._widgets)))

    @property
    def later_count(self) -> int:
        """Blocks parked below the window (none while it reaches the end)."""
        if self._at_end or not self._widgets:
            return 0
        return len(self.vm.blocks) - 1 - self._index(next(reversed(self._widgets)))

    def _index(self, block_id: int) -> int:
        return next((i for i, b in enumerate(self.vm.blocks) if b.id == block_id), 0)

    def _show_counts(self) -> None:
        self._earlier.show_count(self.hidden_count)
        self._later.show_count(self.later_count)

    def _prune(self) -> None:
        oldest = list(self._widgets)[:PRUNE_BATCH]
        with self.app.batch_update():
            for block_id in oldest:
                _remove(self._widgets.pop(block_id))
        self._show_counts()

    def show_earlier(self) -> None:
        """Re-create the batch of blocks just above the first one shown."""
        hidden = self.hidden_count
        if hidden == 0:
            return
        start = max(0, hidden - PRUNE_BATCH)
        self._widgets = {**self._make(self.vm.blocks[start:hidden]), **self._widgets}
        with self.app.batch_update():
            self.mount_all(list(self._widgets.values())[: hidden - start], after=self._earlier)
        self._show_counts()

    async def show_later(self) -> None:
        """Re-create the batch of blocks just below the last one shown; once the window
        reaches the end, new blocks are mounted again as they come."""
        if self._at_end:
            return
        first = len(self.vm.blocks) - self.later_count
        stop = first + PRUNE_BATCH
        added = self._make(self.vm.blocks[first:stop])
        self._widgets.update(added)
        self._at_end = stop >= len(self.vm.blocks)
        await self.mount_all(added.values(), before=self._later)
        self._show_counts()

    async def _show_window(self, start: int, stop: int) -> None:
        """Mount blocks `start:stop` of the view model in place of the window shown."""
        for widget in self._widgets.values():
            _remove(widget)
        self._widgets = self._make(self.vm.blocks[start:stop])
        self._at_end = stop >= len(self.vm.blocks)
        self._release_anchor()
        await self.mount_all(self._widgets.values(), before=self._later)
        self._show_counts()

    def _make(self, blocks: list[Block]) -> dict[int, Widget]:
        widgets = {block.id: make_block_widget(block, self.vm.clock) for block in blocks}
        if self._found in widgets:
            widgets[self._found].add_class("-found")
        return widgets

    def _release_anchor(self) -> None:
        # Textual keeps an anchored view at the bottom as content changes: a view moved
        # elsewhere by a key must stay where it was put.
        if self.is_anchored:
            release_anchor_here(self)

    async def reveal(self, block_id: int | None) -> None:
        """Mark the block a search found and scroll it into view, mounting the window around
        it first when it is parked; None clears the mark (what the search unfolded for the
        last match stays open: the person was reading it)."""
        previous = self._widgets.get(self._found) if self._found is not None else None
        if previous is not None:
            previous.remove_class("-found")
        self._found = block_id
        if block_id is None:
            return
        if self._opened is not None:  # the search moved on: fold what it opened on the way
            self._opened.expanded = False
            self._opened = None
        widget = self._widgets.get(block_id)
        if widget is None:
            index = self._index(block_id)
            start = max(0, index - PRUNE_BATCH // 2)
            await self._show_window(start, start + 2 * PRUNE_BATCH)
            widget = self._widgets[block_id]
        widget.add_class("-found")
        if isinstance(widget, ToolCallBlock | Thinking) and not widget.expanded:
            widget.expanded = True  # the match may be in its folded part
            self._opened = widget
        self._release_anchor()
        self.call_after_refresh(self.scroll_to_center, widget, animate=False, immediate=True)

    def toggle_last_tool(self) -> None:
        """Ctrl+O: expand or fold the newest tool call (its sub-agent's transcript for `task`)."""
        last = next((b for b in reversed(self.vm.blocks) if isinstance(b, ToolBlock)), None)
        widget = self._widgets.get(last.id) if last is not None else None
        if isinstance(widget, ToolCallBlock):
            widget.action_toggle_open()
            if not self.following:
                self.call_after_refresh(self.scroll_to_widget, widget, animate=False)
        elif last is not None:
            self.app.call_later(self._toggle_parked, last.id)

    async def _toggle_parked(self, block_id: int) -> None:
        await self.reveal(block_id)  # mounted and opened
        await self.reveal(None)
        self._opened = None

    # ------------------------------------------------------------ keys

    def action_follow(self) -> None:
        if not self._at_end:
            self.redraw()  # the newest blocks, anchored
            return
        # Anchor again rather than trusting the released anchor to re-engage (textual#6677).
        self.anchor()

    async def page(self, pages: int) -> None:
        """Scroll by whole pages at once, not after the next refresh: a burst of PageUp presses
        keeps going instead of each starting from the same place. Up releases the anchor; down
        past the window's last block brings the next batch."""
        if pages > 0 and not self._at_end and self.scroll_y >= self.max_scroll_y:
            await self.show_later()
        height = self.scrollable_content_region.height
        self.scroll_to(y=self.scroll_y + pages * height, animate=False, immediate=True)

    async def action_top(self) -> None:
        """The very start of the session, however much of it is parked."""
        if self.hidden_count:
            await self._show_window(0, 2 * PRUNE_BATCH)
        self._release_anchor()
        self.scroll_home(animate=False, immediate=True)


def _remove(widget: Widget) -> None:
    if widget.parent is not None:  # a redraw mounts newest first: older ones may not be yet
        widget.remove()
