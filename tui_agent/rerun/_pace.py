"""The player's pace: how fast the rerun goes, and stepping through it while paused.

The conductor awaits `beat(position, record)` before every recorded thing it lets happen (a
chunk of the model's answer, a tool's result, an input of the person), with the log's next
record. Playing, a beat waits the recorded gap to that record divided by the speed (at most
`MAX_GAP_S`: a person's long pause is not worth waiting through) plus `TICK_S` per chunk, so text
arrives as it streamed. Paused, a beat waits for a permit: `step()` lets one beat through,
`run_until(reached)` plays on until the records written satisfy `reached` (the player's: a
step's or a turn's end is among them), then pauses again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tui_agent.context import Record

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0)
MAX_GAP_S = 2.0
TICK_S = 0.02


class PlayerPace:
    def __init__(self, *, paused: bool = False) -> None:
        self.paused = paused
        self.speed_index = SPEEDS.index(1.0)
        self.waiting = 0  # beats held by the pause right now
        self.released = False
        self._permits = 0
        self._until: Callable[[int], bool] | None = None
        self._wake = asyncio.Event()
        self._last_ts: float | None = None
        self.on_change: Callable[[], None] = lambda: None

    @property
    def speed(self) -> float:
        return SPEEDS[self.speed_index]

    def toggle(self) -> None:
        self.paused = not self.paused
        self._until = None
        self._poke()

    def faster(self, steps: int = 1) -> None:
        self.speed_index = max(0, min(len(SPEEDS) - 1, self.speed_index + steps))
        self._poke()

    def step(self) -> None:
        """Lets one beat through (pauses first if playing)."""
        self.paused = True
        self._permits += 1
        self._poke()

    def run_until(self, reached: Callable[[int], bool]) -> None:
        """Plays on, and pauses at the first beat where `reached(records written)` holds."""
        self.paused = False
        self._until = reached
        self._poke()

    def release(self) -> None:
        """No more waiting: the player is closing."""
        self.released = True
        self._poke()

    async def beat(self, position: int, record: Record | None) -> None:
        if self.released:
            return
        if self._until is not None and self._until(position):
            self._until = None
            self.paused = True
            self.on_change()
        while self.paused and not self.released:
            if self._permits:
                self._permits -= 1
                return
            self.waiting += 1
            try:
                await self._wake.wait()
            finally:
                self.waiting -= 1
        await asyncio.sleep(self._gap(record) / self.speed)

    async def sleep(self, seconds: float) -> None:
        if not self.released:
            await asyncio.sleep(min(seconds, MAX_GAP_S) / self.speed)

    def _gap(self, record: Record | None) -> float:
        if record is None:
            return TICK_S
        gap = 0.0 if self._last_ts is None else max(record.ts - self._last_ts, 0.0)
        self._last_ts = record.ts
        return min(gap, MAX_GAP_S) + TICK_S

    def _poke(self) -> None:
        self._wake.set()
        self._wake = asyncio.Event()
        self.on_change()
