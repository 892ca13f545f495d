"""Ctrl+R: search the prompt history (this workspace's, across sessions), newest first.

Typing narrows the list to prompts holding the words typed (in any order, any case); Enter
(or a click) puts the chosen prompt in the input for editing; Esc leaves the draft as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

SHOWN = 200


def search_history(prompts: Sequence[str], query: str) -> list[str]:
    """Prompts holding every word of `query`, newest first, each once."""
    words = query.lower().split()
    found: list[str] = []
    for prompt in reversed(prompts):
        lower = prompt.lower()
        if all(word in lower for word in words) and prompt not in found:
            found.append(prompt)
            if len(found) >= SHOWN:
                break
    return found


class HistorySearch(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Cancel"),
        Binding("ctrl+r,down", "move(1)", "Older", show=False),
        Binding("up", "move(-1)", "Newer", show=False),
    ]

    def __init__(self, prompts: Sequence[str]) -> None:
        super().__init__(id="history-search")
        self.prompts = list(prompts)
        self.matches: list[str] = []
        self.query_input = Input(placeholder="search your prompts", id="history-query")
        self.results = OptionList(id="history-results")

    def compose(self) -> ComposeResult:
        with Vertical(id="history-box"):
            yield Static("Prompt history (Enter: use it · Esc: back)", classes="title")
            yield self.query_input
            yield self.results
        yield Footer()

    def on_mount(self) -> None:
        self._show("")
        self.query_input.focus()

    @on(Input.Changed, "#history-query")
    def _on_query(self, event: Input.Changed) -> None:
        self._show(event.value)

    def _show(self, query: str) -> None:
        self.matches = search_history(self.prompts, query)
        self.results.set_options(
            [
                Option(Text(" ⏎ ".join(p.splitlines()), overflow="ellipsis", no_wrap=True))
                for p in self.matches
            ]
            or [Option(Text("no prompt matches", style="dim italic"), disabled=True)]
        )
        self.results.highlighted = 0 if self.matches else None

    def action_move(self, step: int) -> None:
        if self.matches:
            at = (self.results.highlighted or 0) + step
            self.results.highlighted = max(0, min(len(self.matches) - 1, at))

    @on(Input.Submitted, "#history-query")
    def _on_query_submitted(self) -> None:
        self._choose(self.results.highlighted)

    @on(OptionList.OptionSelected, "#history-results")
    def _on_selected(self, event: OptionList.OptionSelected) -> None:
        self._choose(event.option_index)

    def _choose(self, index: int | None) -> None:
        self.dismiss(self.matches[index] if index is not None and self.matches else None)
