"""Completion lists shown above the input: slash commands while typing `/`, workspace paths
while typing `@path`. Neither takes the focus; the input routes Up/Down/Tab to them."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui_agent.ui.commands import SlashCommand, matching


class _Completion(OptionList, can_focus=False):
    def _show(self, options: Sequence[Option]) -> bool:
        self.set_options(options)
        if options:
            self.highlighted = 0
        return bool(options)

    def move(self, step: int) -> None:
        if self.option_count:
            self.highlighted = ((self.highlighted or 0) + step) % self.option_count

    @property
    def chosen_index(self) -> int | None:
        if not self.option_count or self.highlighted is None:
            return None
        return self.highlighted


class SlashCompletion(_Completion):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.matches: list[SlashCommand] = []

    def filter(self, prefix: str, custom: Sequence[SlashCommand] = ()) -> bool:
        """Show the commands matching `prefix`; returns whether any matched."""
        self.matches = matching(prefix, custom)
        return self._show([Option(_render(c), id=c.name) for c in self.matches])

    @property
    def chosen(self) -> SlashCommand | None:
        index = self.chosen_index
        return None if index is None else self.matches[index]


class PathCompletion(_Completion):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.paths: list[str] = []

    def show_paths(self, paths: Sequence[str]) -> bool:
        self.paths = list(paths)
        return self._show([Option(_render_path(p)) for p in self.paths])

    @property
    def chosen(self) -> str | None:
        index = self.chosen_index
        return None if index is None else self.paths[index]


def _render(command: SlashCommand) -> Text:
    text = Text()
    text.append(f"/{command.name}", style="bold")
    if command.args:
        text.append(f" {command.args}", style="dim")
    text.append(f"  {command.help}")
    return text


def _render_path(path: str) -> Text:
    folder, _, name = path.rstrip("/").rpartition("/")
    text = Text()
    if folder:
        text.append(f"{folder}/", style="dim")
    text.append(name + ("/" if path.endswith("/") else ""), style="bold")
    return text
