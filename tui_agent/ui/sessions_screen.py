"""The session picker for /sessions and /resume without an id: returns the chosen session id."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from tui_agent.ui.hooks import SessionSummary


class SessionPicker(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, sessions: list[SessionSummary]) -> None:
        super().__init__(id="sessions")
        self.sessions = sessions

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-box"):
            yield Static("Resume a session (Enter picks, Esc closes)", classes="title")
            options = []
            for s in self.sessions:
                label = Text()
                label.append(s.updated, style="dim")
                label.append(f"  {s.title[:80]}  ")
                label.append(s.session_id, style="dim")
                options.append(Option(label, id=s.session_id))
            yield OptionList(*options)
        yield Footer()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)
