"""Full garbage collections wait while the person types, for a bounded number of young ones.

Python's collector sweeps the whole heap now and then (a collection of its oldest generation):
in the app, with a streamed answer's lines and Textual's caches of them, one took 50 to 100 ms
of CPU, and up to 260 ms of wall time on a busy machine, about every four seconds while a 10 KB
answer streamed. A key that arrived meanwhile waited for it: those were the slowest echoes of
all (`benchmarks/echo.py`). So from the first key until the person has typed nothing for
`QUIET_S` the sweep does not start on its own; the young generations go on being collected as
usual (a millisecond or two each). When they come to `HELD_ROUNDS` times as many as Python
waits for before a sweep, the sweep runs just after the next key's echo, the moment furthest
from the key after it. After a pause Python's own rule applies again.

The sweep is what frees cycles among old objects: a widget that was removed, with its
Textual caches and the lines they hold (up to 30,000 objects a sweep while the long day's turns
ran). Held until a pause of a second (and for 30 s at most, as first written), they piled up
whenever turns came less than a second apart, as on a quiet machine: 276,000 objects in one
sweep. The memory they took stayed with the process after they were freed, since Python's
allocator gives an arena back only once nothing in it lives: the long day's app ended at
207 MB with the hold never ended by a pause (`benchmarks/long_day.py`), 173 MB with a sweep
each time Python's count came due (as without the hold), 176 MB with one each `HELD_ROUNDS`
counts. One a count was most of the sweeps the hold is there to keep from keys: typing over
three 10 KB answers streamed at 600 characters a second saw 9 sweeps, against 2 held until a
pause and 4 held for three counts. Held for counts, the pile is bounded by what was allocated,
not by the time the typing lasted, so a fast machine's is no bigger than a slow one's.
Python also skips a due sweep while its old generation grew by less than a quarter since the
last one; in the long day it skipped about one in ten, and the sweep after an echo does not ask.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

QUIET_S = 1.0  # no key for this long: full collections may run again
HELD_ROUNDS = 3  # while typing, a full collection waits for 3x the young ones Python waits for
_NEVER = 2**31 - 1  # a threshold no count of young collections reaches


class TypingCollections:
    """Holds full collections from the first key to the first pause, running one after a key's
    echo once `HELD_ROUNDS` of Python's counts have come due (see the module).

    `clock` tells the time; `later(seconds, callback)` runs `callback` once, that much later
    (the app's timers)."""

    def __init__(
        self, clock: Callable[[], float], later: Callable[[float, Callable[[], None]], object]
    ) -> None:
        self._clock = clock
        self._later = later
        self._typed_at = 0.0
        self._holding = False  # full collections run as Python decides while False
        self._thresholds = gc.get_threshold()

    @property
    def holding(self) -> bool:
        return self._holding

    def typed(self) -> None:
        """A key arrived."""
        self._typed_at = self._clock()
        if not self._holding:
            self._holding = True
            self._thresholds = gc.get_threshold()
            young, middle, *_ = self._thresholds
            gc.set_threshold(young, middle, _NEVER)
            self._later(QUIET_S, self._check)

    def key_painted(self) -> None:
        """A key's echo is on the screen: the next key is as far as it will ever be, so a full
        collection held for `HELD_ROUNDS` counts runs now."""
        young_rounds = gc.get_count()[2]  # young collections since the last full one
        if self._holding and young_rounds > HELD_ROUNDS * self._thresholds[2]:
            gc.collect()

    def _check(self) -> None:
        quiet = self._clock() - self._typed_at
        if quiet >= QUIET_S or quiet < 0:  # (a clock set back ends the hold)
            self.release()
        else:
            self._later(QUIET_S - quiet, self._check)

    def release(self) -> None:
        """Full collections run as Python decides again."""
        if self._holding:
            self._holding = False
            gc.set_threshold(*self._thresholds)
