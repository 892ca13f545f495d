"""The notification queue pane: what will enter history next, in that order.

Pending steers, notifications and reminders come first (they join the running turn at its next
drain point), then queued prompts: when the turn ends they all enter the next turn together, in
the pane's order. A queued prompt can be edited (Enter), removed (Delete), promoted to a steer
(Ctrl+S) or moved (Shift+Up/Down, the selection follows it); pane keys are never text, so typing
here goes to the prompt. Rows are matched by prompt id, never by their text. The pane only says
what the user asked for; the app turns it into loop calls.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui_agent.ui.state import QueueRow
from tui_agent.ui.view_model import ViewModel
from tui_agent.ui.widgets.pane import FollowsViewModel

EMPTY_HINT = Text(
    "nothing queued\nwhile a turn runs: Enter queues a prompt for the next turn, "
    "Ctrl+S steers this one",
    style="dim italic",
)
NEXT_TURN_NOTE = "all enter the next turn, in order"
KIND_LABELS = {"prompt": "next", "steer": "steer", "notification": "note", "reminder": "remind"}


class QueuePane(OptionList):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "edit", "Edit"),
        Binding("delete", "remove", "Remove", key_display="Del"),
        Binding("ctrl+s", "steer", "Steer now"),
        Binding("shift+up", "move(-1)", "Move up"),
        Binding("shift+down", "move(1)", "Move down"),
    ]

    class EditRequested(Message):
        def __init__(self, prompt_id: str, text: str) -> None:
            super().__init__()
            self.prompt_id = prompt_id
            self.text = text

    class RemoveRequested(Message):
        def __init__(self, prompt_id: str) -> None:
            super().__init__()
            self.prompt_id = prompt_id

    class SteerRequested(Message):
        def __init__(self, prompt_id: str) -> None:
            super().__init__()
            self.prompt_id = prompt_id

    class MoveRequested(Message):
        def __init__(self, prompt_id: str, offset: int) -> None:
            super().__init__()
            self.prompt_id = prompt_id
            self.offset = offset

    def __init__(self, vm: ViewModel, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.vm = vm
        self.border_title = "Queue"
        FollowsViewModel(self, vm, ("queue",), self.refresh_rows)

    def on_mount(self) -> None:
        self.refresh_rows()

    def refresh_rows(self) -> None:
        # The selection follows the item, wherever a move or a drain put it.
        selected = self._highlighted_id()
        rows = self.vm.queue
        ids = [_row_id(i, row) for i, row in enumerate(rows)]
        self.set_options(
            [
                Option(_render_row(i, row), id=row_id)
                for i, (row, row_id) in enumerate(zip(rows, ids, strict=True), start=1)
            ]
            or [Option(EMPTY_HINT, disabled=True)]
        )
        if rows:
            first_prompt = next((i for i, r in enumerate(rows) if r.prompt_id is not None), 0)
            self.highlighted = ids.index(selected) if selected in ids else first_prompt
        self.border_title = f"Queue ({len(rows)})" if rows else "Queue"
        prompts = sum(1 for row in rows if row.kind == "prompt")
        self.border_subtitle = NEXT_TURN_NOTE if prompts > 1 else ""
        if self.has_focus:  # only the focused pane's keys are in the footer
            self.refresh_bindings()

    def _highlighted_id(self) -> str | None:
        if self.highlighted is None or self.highlighted >= self.option_count:
            return None
        return self.get_option_at_index(self.highlighted).id

    @property
    def selected_row(self) -> QueueRow | None:
        index = self.highlighted
        if index is None or index >= len(self.vm.queue):
            return None
        return self.vm.queue[index]

    def _selected_prompt(self) -> QueueRow | None:
        row = self.selected_row
        return row if row is not None and row.prompt_id is not None else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("edit", "remove", "steer", "move"):
            row = self._selected_prompt()
            if row is None:
                return None
            if action == "move":
                prompts = [r for r in self.vm.queue if r.prompt_id is not None]
                at = prompts.index(row) + int(str(parameters[0]))
                return True if 0 <= at < len(prompts) else None
        return True

    def action_edit(self) -> None:
        row = self._selected_prompt()
        if row is not None and row.prompt_id is not None:
            self.post_message(self.EditRequested(row.prompt_id, row.text))

    def action_remove(self) -> None:
        row = self._selected_prompt()
        if row is not None and row.prompt_id is not None:
            self.post_message(self.RemoveRequested(row.prompt_id))

    def action_steer(self) -> None:
        row = self._selected_prompt()
        if row is not None and row.prompt_id is not None:
            self.post_message(self.SteerRequested(row.prompt_id))

    def action_move(self, offset: int) -> None:
        row = self._selected_prompt()
        if row is not None and row.prompt_id is not None:
            self.post_message(self.MoveRequested(row.prompt_id, offset))


def _row_id(index: int, row: QueueRow) -> str:
    """Prompts by their id; the other rows by kind and position (they cannot be selected to act)."""
    if row.prompt_id is not None:
        return f"prompt:{row.prompt_id}"
    return f"{row.kind}:{index}"


def _render_row(number: int, row: QueueRow) -> Text:
    label = KIND_LABELS[row.kind]
    if row.kind == "reminder" and row.key:
        label = f"remind:{row.key}"
    text = Text()
    text.append(f"{number}. ", style="dim")
    text.append(f"{label} ", style="bold")
    first = row.text.strip().splitlines()[0] if row.text.strip() else ""
    text.append(first[:200])
    return text
