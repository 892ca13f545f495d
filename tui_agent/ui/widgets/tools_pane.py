"""The pending tool calls pane: one row per live tool machine, selectable, Delete cancels one call.

Pane keys are never text: a printable key typed here goes to the prompt (the app moves the focus).

An `OptionList` (drawn line by line, so a long list stays cheap). Rows are rebuilt when the view
model says the tools changed and once a second while something runs, so elapsed times tick. When
the last row goes while the pane has the keyboard, it says so (`Emptied`): the screen gives the
keyboard back.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

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


class ToolsPane(OptionList):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("delete", "cancel_call", "Cancel call", key_display="Del"),
    ]

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

    def refresh_rows(self) -> None:
        highlighted = self.highlighted_call_id
        rows = list(self.vm.tools.values())
        self.set_options(
            [Option(self._render_row(row), id=row.call_id) for row in rows]
            or [Option(Text("no tool call running", style="dim italic"), disabled=True)]
        )
        if rows:
            ids = [row.call_id for row in rows]
            self.highlighted = ids.index(highlighted) if highlighted in ids else 0
        self.border_title = f"Tools ({len(rows)})" if rows else "Tools"
        if self.has_focus:  # only the focused pane's keys are in the footer
            self.refresh_bindings()

    @property
    def highlighted_call_id(self) -> str | None:
        if self.highlighted is None or self.highlighted >= self.option_count:
            return None
        return self.get_option_at_index(self.highlighted).id

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

    def on_resize(self) -> None:
        self.refresh_rows()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_call":
            call_id = self.highlighted_call_id
            row = self.vm.tools.get(call_id) if call_id else None
            live = row is not None and row.state in ("running", "queued", "detached")
            return True if live else None
        return True

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        row = self.vm.tools.get(event.option.id or "")
        if row is not None and row.name == "task":
            self.post_message(ShowSubagent(row.call_id, row.summary))

    def action_cancel_call(self) -> None:
        call_id = self.highlighted_call_id
        if call_id is not None:
            self.post_message(self.CancelRequested(call_id))


def _duration(seconds: int) -> str:
    if seconds < 60:
        return f"{seconds}s"
    return f"{seconds // 60}m{seconds % 60:02d}s"
