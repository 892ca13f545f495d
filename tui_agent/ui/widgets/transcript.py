"""The transcript: a scrolling column of block widgets that follows the tail while streaming.

It keeps at most `MAX_MOUNTED` block widgets; older ones are unmounted in batches while the view
follows the tail, and a line at the top offers them back (click it or press Home), re-created
from the view model, so the whole session stays reachable without a widget per block.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
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
    ViewModel,
)
from tui_agent.ui.widgets.blocks import (
    AssistantText,
    RetryNotice,
    Thinking,
    ToolCallBlock,
    make_block_widget,
)

# Every layout change (even the input growing a line) re-arranges every mounted widget, and a
# Markdown block is several widgets: keep the mounted window small, re-create on demand.
MAX_MOUNTED = 120
PRUNE_BATCH = 60


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


class Transcript(VerticalScroll, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("end", "follow", "Follow", show=False),
        Binding("home", "top", "Top", show=False),
    ]

    def __init__(self, vm: ViewModel, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.vm = vm
        self._widgets: dict[int, Widget] = {}
        self._earlier = EarlierBlocks()

    def on_mount(self) -> None:
        self.mount(self._earlier)
        self._earlier.display = False
        self.redraw()
        self.anchor()

    # ------------------------------------------------------------ view-model changes

    def apply(self, change: Change) -> None:
        match change:
            case BlockAdded():
                self._mount_block(change.block)
            case TextAppended():
                widget = self._widgets.get(change.block.id)
                if isinstance(widget, AssistantText | Thinking):
                    widget.feed(change.delta)
            case StreamEnded():
                widget = self._widgets.get(change.block.id)
                if isinstance(widget, AssistantText | Thinking):
                    widget.end()
            case BlockUpdated():
                widget = self._widgets.get(change.block.id)
                if isinstance(widget, ToolCallBlock | RetryNotice):
                    widget.refresh_block()
            case BlockRemoved():
                widget = self._widgets.pop(change.block.id, None)
                if widget is not None:
                    widget.remove()
            case Reset():
                self.redraw()
            case _:
                pass

    def redraw(self) -> None:
        """Mount the newest blocks of the view model, replacing whatever was shown."""
        for widget in self._widgets.values():
            widget.remove()
        self._widgets = {}
        newest = self.vm.blocks[-PRUNE_BATCH:]
        with self.app.batch_update():
            widgets = [self._make(block) for block in newest]
            if widgets:
                self.mount_all(widgets)
        self._earlier.show_count(len(self.vm.blocks) - len(newest))
        self.anchor()

    def _make(self, block: Block) -> Widget:
        widget = make_block_widget(block, self.vm.clock)
        self._widgets[block.id] = widget
        return widget

    def _mount_block(self, block: Block) -> None:
        self.mount(self._make(block))
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
                self._widgets.pop(block_id).remove()
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
