"""Where the conversation stands in a session's tree of turns, for anyone replaying a log.

A log is one line of records, but the turns in it form a tree: a turn grows from the turn the
conversation was on when it began (its parent), a `rewind` moves the conversation back to just
before a turn (onto that turn's parent) and a `branch.switch` moves it to the end of any turn.
`Branches` follows those moves and keeps, for whoever walks the log, a picture of its own state
(`T`: a fold's history, a replay's events) at each turn's start and at the moment the
conversation last left each turn, so a rewind or a switch can put that picture back. Turns are
numbered by their `turn.begin` records from the start of the log, from 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Branches(Generic[T]):
    def __init__(self) -> None:
        self.parents: list[int | None] = []  # by turn number; None: grew from the empty start
        self.tip: int | None = None  # the turn the conversation is on (None: before any)
        self._starts: list[T] = []
        self._ends: dict[int | None, T] = {}

    def begin(self, now: T) -> int:
        """A turn begins on the tip (`now`: the picture as it begins); returns its number."""
        self._ends[self.tip] = now
        self._starts.append(now)
        self.parents.append(self.tip)
        self.tip = len(self.parents) - 1
        return self.tip

    def rewind(self, turn: int, now: Callable[[], T]) -> T | None:
        """Back to just before `turn`: the picture then, or None (nothing moves) for a turn
        the log never began."""
        if not 0 <= turn < len(self._starts):
            return None
        self._ends[self.tip] = now()
        self.tip = self.parents[turn]
        return self._starts[turn]

    def switch(self, turn: int, now: Callable[[], T]) -> T | None:
        """To the end of `turn`: the picture when the conversation last left it, `now()` when
        it is the tip already, or None (nothing moves) for a turn the log never began."""
        if not 0 <= turn < len(self._starts):
            return None
        current = now()
        self._ends[self.tip] = current
        self.tip = turn
        return self._ends[turn]

    def ends(self) -> dict[int | None, T]:
        """The picture when the conversation last left each turn (None: the empty start)."""
        return dict(self._ends)

    def path(self, turn: int | None = None) -> list[int]:
        """The turns from the first to `turn` (default: the tip), oldest first."""
        found: list[int] = []
        at = self.tip if turn is None else turn
        while at is not None:
            found.append(at)
            at = self.parents[at]
        return found[::-1]
