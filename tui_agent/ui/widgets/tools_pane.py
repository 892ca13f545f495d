"""The pending tool calls pane: one row per live tool machine, selectable, Delete cancels one call.

Pane keys are never text: a printable key typed here goes to the prompt (the app moves the focus).

Drawn line by line (Textual's line API), a row's lines kept until that row's text changes: with
eight sub-agents each reporting its calls on its `task` row, an update redraws the rows that
changed, never the whole list (an `OptionList` measured and drew every row again at each
change, which cost more than the rest of a frame). Rows are rebuilt when the view model says
the tools changed and once a second while something runs, so elapsed times tick. Enter on a
`task` row (or a click) opens its sub-agent's transcript. When the last row goes while the pane
has the keyboard, it says so (`Emptied`): the screen gives the keyboard back.
"""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import visualize

from tui_agent.lazy_dataclass import dataclass
from tui_agent.ui.state import ToolRow
from tui_agent.ui.view_model import ViewModel
from tui_agent.ui.widgets.blocks import FINAL_WORDS, TOOL_GLYPHS, ShowSubagent
from tui_agent.ui.widgets.pane import FollowsViewModel

STATE_WORDS = {
    "queued": "queued",
    "awaiting_approval": "awaiting approval",
    "running": "running",
    "detached": "in background",
    "done": "done",
    "failed": "failed",
    **FINAL_WORDS,
}
EMPTY = Text("no tool call running", style="dim italic")


@dataclass
class _Drawn:
    """One row as drawn: its text and, per look (highlighted or not), its strips."""

    call_id: str | None  # None: the "nothing running" line
    text: Text
    top: int = 0  # its first line in the pane
    strips: dict[bool, list[Strip]] = field(default_factory=dict)
    height: int = field(init=False)  # lines: a row's lines are cut, never wrapped

    def __post_init__(self) -> None:
        self.height = self.text.plain.count("\n") + 1


class ToolsPane(ScrollView, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("delete", "cancel_call", "Cancel call", key_display="Del"),
        Binding("enter", "select", "Select", show=False),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tools-pane--row",
        "tools-pane--highlighted",
        "tools-pane--empty",
    }
    # The look of Textual's `OptionList`, which this pane was.
    DEFAULT_CSS = """
    ToolsPane {
        color: $foreground;
        overflow-x: hidden;
        background: $surface;
        & > .tools-pane--empty {
            color: $text-disabled;
        }
        & > .tools-pane--highlighted {
            color: $foreground;
            background: $block-cursor-blurred-background;
            text-style: $block-cursor-blurred-text-style;
        }
        &:focus {
            background-tint: $foreground 5%;
            & > .tools-pane--highlighted {
                color: $block-cursor-foreground;
                background: $block-cursor-background;
                text-style: $block-cursor-text-style;
            }
        }
    }
    """

    highlighted: reactive[int | None] = reactive(None)

    class CancelRequested(Message):
        def __init__(self, call_id: str) -> None:
            super().__init__()
            self.call_id = call_id

    class Emptied(Message):
        """The last row went while the pane had the keyboard: nothing is left to select."""

    def __init__(self, vm: ViewModel, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.vm = vm
        self.border_title = "Tools"
        self._drawn: list[_Drawn] = []
        self._lines: list[tuple[_Drawn, int]] = []  # each line of the pane: its row, its offset
        self.row_draws = 0  # rows drawn into strips (a test counts them)
        FollowsViewModel(self, vm, ("tools",), self._on_tools_changed)

    def _on_tools_changed(self) -> None:
        self.refresh_rows()
        if not self.vm.tools and self.has_focus:
            self.post_message(self.Emptied())

    def on_mount(self) -> None:
        self.refresh_rows()
        self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        if any(row.state == "running" for row in self.vm.tools.values()):
            self.refresh_rows()

    # ------------------------------------------------------------ rows

    def refresh_rows(self) -> None:
        """Rebuild the rows from the view model; redraw only the lines of rows that changed."""
        highlighted = self.highlighted_call_id
        old: dict[str | None, _Drawn] = {row.call_id: row for row in self._drawn}
        rows = list(self.vm.tools.values())
        wanted: list[tuple[str | None, Text]] = [(r.call_id, self._render_row(r)) for r in rows]
        drawn: list[_Drawn] = []
        changed: list[_Drawn] = []
        top = 0
        for call_id, text in wanted or [(None, EMPTY)]:
            row = old.get(call_id)
            if row is None or row.text != text:
                row = _Drawn(call_id, text)
                changed.append(row)
            elif row.top != top:
                changed.append(row)
            row.top = top
            top += row.height
            drawn.append(row)
        moved_out = len(drawn) != len(self._drawn) or top != len(self._lines)
        self._drawn = drawn
        self._lines = [(row, offset) for row in drawn for offset in range(row.height)]
        width = self.scrollable_content_region.width
        if self.virtual_size != Size(width, top):
            self.virtual_size = Size(width, top)
        if moved_out:
            self.refresh()
        else:
            for row in changed:
                self.refresh_lines(row.top, row.height)
        ids = [row.call_id for row in rows]
        if rows:
            self.highlighted = ids.index(highlighted) if highlighted in ids else 0
        else:
            self.highlighted = None
        self.border_title = f"Tools ({len(rows)})" if rows else "Tools"
        if self.has_focus:  # only the focused pane's keys are in the footer
            self.refresh_bindings()

    @property
    def option_count(self) -> int:
        """How many rows the pane shows (the "nothing running" line counts as one)."""
        return len(self._drawn)

    def row_text(self, index: int) -> str:
        return self._drawn[index].text.plain

    @property
    def highlighted_call_id(self) -> str | None:
        if self.highlighted is None or self.highlighted >= len(self._drawn):
            return None
        return self._drawn[self.highlighted].call_id

    def _render_row(self, row: ToolRow) -> Text:
        elapsed = max(0, int(self.vm.clock() - row.started_at))
        head = Text()
        head.append(f"{TOOL_GLYPHS.get(row.state, '·')} ", style="bold")
        if row.index:
            head.append(f"#{row.index} ", style="dim")
        head.append(row.name, style="bold")
        if row.detail or row.summary:
            head.append(f" {row.detail or row.summary}")
        state = STATE_WORDS.get(row.state, row.state)
        lines = [head, Text(f"  {state} · {_duration(elapsed)}", style="dim")]
        if row.tail:
            lines.append(Text(f"  {row.tail}", style="italic dim"))
        # One line each for what, state and output: a long command is cut, never wrapped.
        width = self.scrollable_content_region.width
        if width > 0:
            for line in lines:
                line.truncate(width, overflow="ellipsis")
        return Text("\n").join(lines)

    # ------------------------------------------------------------ drawing

    def render_line(self, y: int) -> Strip:
        line = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        if line >= len(self._lines):
            return Strip.blank(width, self.get_visual_style("tools-pane--row").rich_style)
        row, offset = self._lines[line]
        lit = row.call_id is not None and row is self._highlighted_row()
        strips = row.strips.get(lit)
        if strips is None or (strips and strips[0].cell_length != width):
            look = "tools-pane--highlighted" if lit else None
            if row.call_id is None:
                look = "tools-pane--empty"
            strips = row.strips[lit] = self._draw(row.text, look, width)
        return strips[offset] if offset < len(strips) else Strip.blank(width)

    def _draw(self, text: Text, look: str | None, width: int) -> list[Strip]:
        """A row's strips: `look` is the highlight's or the empty line's component class."""
        self.row_draws += 1
        names = ("tools-pane--row", look) if look else ("tools-pane--row",)
        style = self.get_visual_style(*names)
        visual = visualize(self, text, markup=False)
        strips = visual.to_strips(self, visual, width, None, style)
        return [strip.extend_cell_length(width, style.rich_style) for strip in strips]

    def _highlighted_row(self) -> _Drawn | None:
        index = self.highlighted
        return self._drawn[index] if index is not None and index < len(self._drawn) else None

    def watch_highlighted(self, old: int | None, new: int | None) -> None:
        for index in (old, new):
            if index is not None and index < len(self._drawn):
                row = self._drawn[index]
                self.refresh_lines(row.top, row.height)
        lit = self._highlighted_row()
        if lit is not None:
            self.scroll_to_region(
                Region(0, lit.top, 1, lit.height), animate=False, force=True, immediate=True
            )

    def notify_style_update(self) -> None:
        # A new theme or focus look: every row's strips were drawn in the old one.
        for row in self._drawn:
            row.strips.clear()
        super().notify_style_update()

    def on_resize(self) -> None:
        self._drawn = []  # the rows are cut to the width: build them again
        self.refresh_rows()

    # ------------------------------------------------------------ keys and clicks

    def action_move(self, offset: int) -> None:
        live = sum(1 for row in self._drawn if row.call_id is not None)
        if live and self.highlighted is not None:
            self.highlighted = max(0, min(live - 1, self.highlighted + offset))

    def action_first(self) -> None:
        if self.highlighted is not None:
            self.highlighted = 0

    def action_last(self) -> None:
        if self.highlighted is not None:
            self.highlighted = len(self._drawn) - 1

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        line = self.scroll_offset.y + offset.y
        if line < len(self._lines) and self._lines[line][0].call_id is not None:
            self.highlighted = self._drawn.index(self._lines[line][0])
            self.action_select()

    def action_select(self) -> None:
        call_id = self.highlighted_call_id
        row = self.vm.tools.get(call_id) if call_id else None
        if row is not None and row.name == "task":
            self.post_message(ShowSubagent(row.call_id, row.summary))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_call":
            call_id = self.highlighted_call_id
            row = self.vm.tools.get(call_id) if call_id else None
            live = row is not None and row.state in ("running", "queued", "detached")
            return True if live else None
        return True

    def action_cancel_call(self) -> None:
        call_id = self.highlighted_call_id
        if call_id is not None:
            self.post_message(self.CancelRequested(call_id))


def _duration(seconds: int) -> str:
    if seconds < 60:
        return f"{seconds}s"
    return f"{seconds // 60}m{seconds % 60:02d}s"
