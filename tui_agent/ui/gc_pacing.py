"""Full garbage collections wait while the person types.

Python's collector sweeps the whole heap now and then (a collection of its oldest generation):
in the app, with a streamed answer's lines and Textual's caches of them, one took 50 to 100 ms
of CPU, and up to 260 ms of wall time on a busy machine, about every four seconds while a 10 KB
answer streamed. A key that arrived meanwhile waited for it: those were the slowest echoes of
all (`benchmarks/echo.py`). The young generations go on being collected as usual (a
millisecond or two each); only the full sweep waits, from the first key until the person has
typed nothing for `QUIET_S`, when Python's own rule (the heap grew by a quarter since the last
sweep) applies again. A person who types without a pause for `LONGEST_HOLD_S` gets the sweep
just after a key's echo, the moment furthest from the next key.

Garbage the sweep would find (cycles among old objects) stays in memory only as long as the
sweep waits; what loses its last reference is freed at once, as always.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

QUIET_S = 1.0  # no key for this long: full collections may run again
LONGEST_HOLD_S = 30.0  # typing without such a pause: a full collection after a key's echo
_NEVER = 2**31 - 1  # a threshold no count of young collections reaches


class TypingCollections:
    """Holds full collections from the first key to the first pause (see the module).

    `clock` tells the time; `later(seconds, callback)` runs `callback` once, that much later
    (the app's timers)."""

    def __init__(
        self, clock: Callable[[], float], later: Callable[[float, Callable[[], None]], object]
    ) -> None:
        self._clock = clock
        self._later = later
        self._typed_at = 0.0
        self._held_since: float | None = None  # None: full collections run as Python decides
        self._thresholds = gc.get_threshold()

    @property
    def holding(self) -> bool:
        return self._held_since is not None

    def typed(self) -> None:
        """A key arrived."""
        self._typed_at = self._clock()
        if self._held_since is None:
            self._held_since = self._typed_at
            self._thresholds = gc.get_threshold()
            young, middle, *_ = self._thresholds
            gc.set_threshold(young, middle, _NEVER)
            self._later(QUIET_S, self._check)

    def key_painted(self) -> None:
        """A key's echo is on the screen: the next key is as far as it will ever be."""
        now = self._clock()
        if self._held_since is not None and now - self._held_since >= LONGEST_HOLD_S:
            self._held_since = now
            gc.collect()

    def _check(self) -> None:
        quiet = self._clock() - self._typed_at
        if quiet >= QUIET_S or quiet < 0:  # (a clock set back ends the hold)
            self.release()
        else:
            self._later(QUIET_S - quiet, self._check)

    def release(self) -> None:
        """Full collections run as Python decides again."""
        if self._held_since is not None:
            self._held_since = None
            gc.set_threshold(*self._thresholds)
