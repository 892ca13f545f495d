"""The tool-call id normaliser: every call id in a turn's history is unique.

Providers reuse ids (`call-1` in every response) or repeat one inside a response. The first
occurrence of an unseen raw id keeps it; any later occurrence (seen in history, claimed earlier
in the turn, or duplicated within the response) becomes `raw__n`, with `n` starting at
`max(occurrence + 1, 2)` and growing while taken. One stream index keeps one id across its
deltas. `rollback()` releases what a discarded attempt claimed, so a retry gets the same ids.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable


class ToolCallIds:
    def __init__(self, seen: Iterable[str] = ()) -> None:
        self._taken: set[str] = set()
        self._occurrences: Counter[str] = Counter()
        for call_id in seen:
            self._taken.add(call_id)
            self._occurrences[call_id] += 1
        self._by_index: dict[int, str] = {}
        # (raw id, claimed id) of the current attempt, for rollback.
        self._attempt: list[tuple[str, str]] = []

    def claim(self, index: int, raw_id: str) -> str:
        """The id for the call at `index` of the current attempt."""
        known = self._by_index.get(index)
        if known is not None:
            return known
        occurrence = self._occurrences[raw_id]
        if occurrence == 0 and raw_id not in self._taken:
            claimed = raw_id
        else:
            n = max(occurrence + 1, 2)
            while f"{raw_id}__{n}" in self._taken:
                n += 1
            claimed = f"{raw_id}__{n}"
        self._occurrences[raw_id] += 1
        self._taken.add(claimed)
        self._by_index[index] = claimed
        self._attempt.append((raw_id, claimed))
        return claimed

    def rollback(self) -> None:
        """Forget everything the current attempt claimed (it was discarded)."""
        for raw_id, claimed in self._attempt:
            self._taken.discard(claimed)
            self._occurrences[raw_id] -= 1
        self._attempt.clear()
        self._by_index.clear()

    def commit(self) -> None:
        """Keep what the current attempt claimed; the next attempt starts at index zero."""
        self._attempt.clear()
        self._by_index.clear()
