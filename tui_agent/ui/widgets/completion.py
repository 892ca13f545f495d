"""Slash-command completion: the matching commands, shown above the input while typing `/`."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui_agent.ui.commands import SlashCommand, matching


class SlashCompletion(OptionList, can_focus=False):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.matches: list[SlashCommand] = []

    def filter(self, prefix: str) -> bool:
        """Show the commands matching `prefix`; returns whether any matched."""
        self.matches = matching(prefix)
        self.set_options([Option(_render(c), id=c.name) for c in self.matches])
        if self.matches:
            self.highlighted = 0
        return bool(self.matches)

    def move(self, step: int) -> None:
        if self.matches:
            self.highlighted = ((self.highlighted or 0) + step) % len(self.matches)

    @property
    def chosen(self) -> SlashCommand | None:
        if not self.matches or self.highlighted is None:
            return None
        return self.matches[self.highlighted]


def _render(command: SlashCommand) -> Text:
    text = Text()
    text.append(f"/{command.name}", style="bold")
    if command.args:
        text.append(f" {command.args}", style="dim")
    text.append(f"  {command.help}")
    return text
