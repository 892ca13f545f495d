"""Opening a long session without holding the screen: its view model is built beforehand.

A resumed session's transcript is replayed through the view model before anything of it is
drawn; a day of turns is tens of thousands of events, a quarter of a second and more of the
event loop in one go (`benchmarks/long_day.py`). `preload` replays it into a scratch view model
in slices with a turn of the event loop between them (`ViewModel.loaded`), holding the loop's
live events meanwhile in order; the app then takes the result over at once
(`TuiAgentApp._attach_loop`), so no widget sees a half-loaded session and no event is lost.
A short transcript is left to `ViewModel.reset`, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tui_agent.loop.api import LoopApi
from tui_agent.loop.events import LoopEvent
from tui_agent.loop.snapshot import LoopSnapshot
from tui_agent.ui.view_model import LOAD_SLICE, ViewModel
from tui_agent.ui.welcome import welcome_text


@dataclass(frozen=True)
class Preloaded:
    vm: ViewModel  # the session's view model, to be taken over (`ViewModel.take`)
    held: list[LoopEvent]  # live events the loop published while it loaded, oldest first

    def hand_over(
        self, vm: ViewModel, snapshot: LoopSnapshot, deliver: Callable[[LoopEvent], None]
    ) -> None:
        """Into the app's view model at once, then the held events to the app's subscriber
        (which takes the loop's events from here on)."""
        vm.take(self.vm, snapshot)
        for event in self.held:
            deliver(event)


async def preload(vm: ViewModel, loop: LoopApi) -> Preloaded | None:
    """The loop's transcript replayed in slices, or None when it is short enough for one go."""
    transcript = loop.transcript()
    if len(transcript) <= LOAD_SLICE:
        return None
    held: list[LoopEvent] = []
    stop = loop.subscribe(held.append)
    try:
        # The welcome heads a resumed transcript too, as in `reset`.
        loaded = await vm.loaded(loop.info, transcript, welcome=welcome_text(loop.info))
    finally:
        stop()
    return Preloaded(loaded, held)
