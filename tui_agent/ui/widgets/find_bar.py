"""Transcript search: the bar that Ctrl+F or `/find TEXT` opens above the prompt.

It searches the view model's blocks, so parked blocks (not mounted, see `Transcript`) are found
as well as shown ones, case-insensitively, in what each block shows: the person's words, the
answers, thinking, a tool call's name, arguments and output, notices. The newest match comes
first; Enter (or F3) steps to the next one up, Shift+Enter (or Shift+F3) back down, and Esc
(the app's key) closes the bar. The bar only posts `Reveal`; the app asks the transcript to
show the block.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static

from tui_agent.ui.state import (
    Block,
    MarkerBlock,
    RetryBlock,
    TextBlock,
    ThinkingBlock,
    ToolBlock,
    UserBlock,
)
from tui_agent.ui.view_model import ViewModel


def shown_text(block: Block) -> str:
    """What a block shows, as searchable text (a prompt's attachments show only as chips)."""
    match block:
        case UserBlock():
            from tui_agent.session import split_attachments  # at the first search

            words, sources = split_attachments(block.text)
            return "\n".join([words, *sources])
        case TextBlock() | ThinkingBlock() | MarkerBlock():
            return block.text
        case ToolBlock():
            return "\n".join([block.name, block.detail, block.diff or block.output])
        case RetryBlock():
            return block.reason


class FindBar(Horizontal):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f3", "step(-1)", "Older", show=False),
        Binding("shift+enter,shift+f3", "step(1)", "Newer", show=False),
    ]

    class Reveal(Message):
        """Show this block (None: no match, take the mark away)."""

        def __init__(self, block_id: int | None) -> None:
            super().__init__()
            self.block_id = block_id

    def __init__(self, vm: ViewModel, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.vm = vm
        self.matches: list[int] = []  # ids of the blocks that match, oldest first
        self.at: int | None = None  # the match shown: an index into `matches`
        self._input = Input(placeholder="find in the transcript", compact=True)
        self._count = Static("", classes="count", markup=False)

    def compose(self) -> ComposeResult:
        yield Static("find: ", classes="label", markup=False)
        yield self._input
        yield self._count

    @property
    def text(self) -> str:
        """What is searched for."""
        return self._input.value

    def open(self, query: str = "") -> None:
        """Show the bar with `query` (searched at once) or the last query, and focus it."""
        self.display = True
        if query and query != self._input.value:
            self._input.value = query  # its Changed message runs the search
        elif query:
            self._search(query)
        self._input.focus()

    def close(self) -> None:
        self.display = False
        self.matches, self.at = [], None
        self.post_message(self.Reveal(None))

    @on(Input.Changed)
    def _on_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._search(event.value)

    @on(Input.Submitted)
    def _on_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_step(-1)

    def _search(self, query: str) -> None:
        """Find every match and show the newest."""
        self.matches = self._matching(query)
        self.at = len(self.matches) - 1 if self.matches else None
        self._show()

    def _matching(self, query: str) -> list[int]:
        needle = query.casefold()
        if not needle.strip():
            return []
        return [b.id for b in self.vm.blocks if needle in shown_text(b).casefold()]

    def action_step(self, direction: int) -> None:
        """The next match up (-1) or down (+1), going round at either end; blocks added since
        the last search are searched too."""
        current = self.matches[self.at] if self.at is not None else None
        self.matches = self._matching(self.text)
        if not self.matches:
            self.at = None
        elif current in self.matches:
            self.at = (self.matches.index(current) + direction) % len(self.matches)
        else:
            self.at = len(self.matches) - 1
        self._show()

    def _show(self) -> None:
        if self.at is None:
            count = "no match" if self.text.strip() else ""
            self.post_message(self.Reveal(None))
        else:
            count = f"{self.at + 1} of {len(self.matches)} · Enter: up, Shift+Enter: down, Esc"
            self.post_message(self.Reveal(self.matches[self.at]))
        self._count.update(Text(count, style="dim"))
