"""Opening a long session without holding the screen: its view model is built beforehand.

A resumed session's transcript is replayed through the view model before anything of it is
drawn; a day of turns is tens of thousands of events, a quarter of a second and more of the
event loop in one go (`benchmarks/long_day.py`). `preload` replays it into a scratch view model
in slices with a turn of the event loop between them (`ViewModel.loaded`), holding the loop's
live events meanwhile in order; the app then takes the result over at once
(`TuiAgentApp._attach_loop`), so no widget sees a half-loaded session and no event is lost.
A short transcript is left to `ViewModel.reset`, as before. The answers among the newest blocks,
the ones the transcript will mount, are drawn in those slices too (`draw_ahead`): a long one is
a hundred Markdown blocks, code among them, which the frame that shows them would otherwise
draw in one go.

While a session opens (`open_session`: the loop built, its log folded, the transcript preloaded)
the cyclic garbage collector waits, and what the opening built is then frozen out of later
collections (`gc.freeze`): a day's session is a few hundred thousand objects that live as long
as the session, and each collection that walked them held the event loop for 200-250 ms. What
the opening left as cyclic garbage (a few thousand objects) is then never collected; everything
else is still freed by reference counting when the session is closed, and a session replaced by
another is given back to the collector once it is closed (`refreeze`).
"""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable

from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop.api import LoopApi
from tui_agent.loop.events import LoopEvent
from tui_agent.loop.snapshot import LoopSnapshot
from tui_agent.ui.state import TextBlock
from tui_agent.ui.view_model import LOAD_SLICE, ViewModel
from tui_agent.ui.welcome import welcome_text
from tui_agent.ui.widgets.markdown_view import draw_ahead
from tui_agent.ui.widgets.transcript import PRUNE_BATCH, Transcript


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


async def open_session(
    opening: Awaitable[LoopApi], vm: ViewModel, shown_in: Transcript
) -> tuple[LoopApi, Preloaded | None]:
    """The loop `opening` gives, and its transcript preloaded for `vm` (`preload`), with the
    collector paused meanwhile and all they built frozen afterwards (see the module)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        loop = await opening
        return loop, await preload(vm, loop, shown_in)
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def refreeze() -> None:
    """After a session was closed: what the openings froze (the closed session among it, alive
    when the next one opened) goes back to the collector, one full collection frees the closed
    session's cycles, and what lives is frozen again. Without it each `/new`, `/resume` or
    `/model` kept the session it replaced for good. The collection is paid once, at the switch
    the person asked for."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


async def preload(vm: ViewModel, loop: LoopApi, shown_in: Transcript) -> Preloaded | None:
    """The loop's transcript replayed in slices, or None when it is short enough for one go;
    then the answers `shown_in` will mount drawn at the width it will give them."""
    transcript = loop.transcript()
    if len(transcript) <= LOAD_SLICE:
        return None
    held: list[LoopEvent] = []
    stop = loop.subscribe(held.append)
    try:
        # The welcome heads a resumed transcript too, as in `reset`.
        loaded = await vm.loaded(loop.info, transcript, welcome=welcome_text(loop.info))
        # The blocks `Transcript.redraw` mounts.
        answers = [b.text for b in loaded.blocks[-PRUNE_BATCH:] if isinstance(b, TextBlock)]
        # An answer's style is the transcript's (it has no colours of its own).
        width = _answer_width(shown_in)
        shown_in.show_scrollbar_while_redrawing()
        app = shown_in.app
        await draw_ahead(app.console, app.console_options, answers, (width,), shown_in.rich_style)
    finally:
        stop()
    return Preloaded(loaded, held)


def _answer_width(transcript: Transcript) -> int:
    """The width an answer gets in `transcript` beside its vertical scrollbar (an answer has no
    margin or padding at its sides). The transcript mounts a resumed session's newest blocks
    newest first; its scrollbar would show only once their height is known, and the first
    answer mounted would be laid out twice (a 10 KB answer is 150 ms of Rich each time): it
    shows the scrollbar from the start instead (`Transcript.show_scrollbar_while_redrawing`)."""
    full = transcript.scrollable_content_region.width
    if not transcript.show_vertical_scrollbar:
        full -= transcript.styles.scrollbar_size_vertical
    return full
