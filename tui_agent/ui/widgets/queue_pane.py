"""The notification queue pane: what will enter history next, in that order.

Pending steers, notifications and reminders come first (they join the running turn at its next
drain point), then queued prompts (each opens a later turn). A queued prompt can be edited,
removed, moved, or promoted to a steer; the pane only says what the user asked for, the app
turns it into loop calls.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui_agent.ui.view_model import QueueRow, ViewModel

EMPTY_HINT = Text(
    "nothing queued\nwhile a turn runs: Enter queues the next prompt, Ctrl+S steers this one",
    style="dim italic",
)
KIND_LABELS = {"prompt": "next", "steer": "steer", "notification": "note", "reminder": "remind"}


class QueuePane(OptionList):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "edit", "Edit"),
        Binding("d,delete", "remove", "Remove"),
        Binding("s", "steer", "Steer now"),
        Binding("shift+up,K", "move(-1)", "Move up"),
        Binding("shift+down,J", "move(1)", "Move down"),
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

    def on_mount(self) -> None:
        self.refresh_rows()

    def refresh_rows(self) -> None:
        selected = self.selected_row
        rows = self.vm.queue
        self.set_options(
            [Option(_render_row(i, row), id=f"q{i}") for i, row in enumerate(rows, start=1)]
            or [Option(EMPTY_HINT, disabled=True)]
        )
        if rows:
            match = next(
                (i for i, r in enumerate(rows) if selected and r.prompt_id == selected.prompt_id),
                None,
            )
            first_prompt = next((i for i, r in enumerate(rows) if r.prompt_id is not None), 0)
            self.highlighted = match if match is not None else first_prompt
        self.border_title = f"Queue ({len(rows)})" if rows else "Queue"
        if self.has_focus:  # only the focused pane's keys are in the footer
            self.refresh_bindings()

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
