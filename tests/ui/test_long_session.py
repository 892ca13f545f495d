"""A long session opens without holding the event loop: its transcript is replayed into the view
model in slices (`ViewModel.loaded`, `ui/long_session.py`), taken over at once, and what the loop
said while it loaded follows it."""

from __future__ import annotations

import asyncio
import gc
import time
import weakref
from collections.abc import Callable

from rich.segment import Segment

from tests.ui.fake_loop import INFO, FakeLoop
from tests.ui.real_loop import until
from tui_agent.loop import events as ev
from tui_agent.loop.api import LoopApi
from tui_agent.loop.snapshot import LoopSnapshot
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.opening import OpeningLoop
from tui_agent.ui.slash_commands import _swap
from tui_agent.ui.state import Change, MarkerBlock, Reset, TextBlock, UserBlock
from tui_agent.ui.view_model import LOAD_SLICE, ViewModel
from tui_agent.ui.widgets.blocks import AssistantText

IDLE = LoopSnapshot("idle", None, None, 0, paused=False)


def turns(count: int) -> list[ev.LoopEvent]:
    """`count` turns of 4 events: a prompt, a step, an answer, the end."""
    events: list[ev.LoopEvent] = []
    for n in range(1, count + 1):
        events += [
            ev.TurnStarted(turn_id=n, prompt_ids=(f"p{n}",), texts=(f"question {n}",)),
            ev.StepStarted(turn_id=n, step=1),
            ev.AssistantDelta(turn_id=n, step=1, text=f"answer {n}"),
            ev.TurnFinished(
                turn_id=n, text=f"answer {n}", result=ev.TurnResult(type="completed", steps=1)
            ),
        ]
    return events


def shown(vm: ViewModel) -> list[tuple[str, str]]:
    return [(type(b).__name__, getattr(b, "text", "")) for b in vm.blocks]


async def test_a_long_transcript_is_replayed_in_slices_into_what_reset_gives() -> None:
    transcript = turns(LOAD_SLICE)  # 4 slices
    whole = ViewModel(INFO, clock=time.time)
    whole.reset(INFO, transcript, IDLE, welcome="hello")
    vm = ViewModel(INFO, clock=time.time)
    changes: list[Change] = []
    vm.listen(changes.append)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0)
            ticks += 1

    ticker = asyncio.create_task(tick())
    loaded = await vm.loaded(INFO, transcript, welcome="hello")
    ticker.cancel()
    # The event loop ran between the slices (the ticker's first run only starts its loop).
    assert ticks >= len(transcript) // LOAD_SLICE - 1
    assert vm.blocks == [] and changes == []  # nothing of it is seen before it is taken over
    vm.take(loaded, IDLE)
    assert shown(vm) == shown(whole)
    assert vm.history == whole.history
    assert changes == [Reset()]


class _TalkingLoop(FakeLoop):
    """Publishes a notice as soon as someone subscribes: an event sent while the session loads."""

    def subscribe(self, callback: Callable[[ev.LoopEvent], None]) -> Callable[[], None]:
        stop = super().subscribe(callback)
        if len(self._subscribers) == 1 and not self.calls:
            self.calls.append(("told", None))
            callback(ev.Notice(level="info", text="said while loading"))
        return stop


async def test_a_long_session_opens_whole_and_what_the_loop_said_meanwhile_follows() -> None:
    real = _TalkingLoop(replayed=turns(LOAD_SLICE))

    async def opener() -> LoopApi:
        return real

    app = TuiAgentApp(OpeningLoop(INFO, opener))
    sizes: list[int] = []  # blocks in the view model at each Reset
    app.vm.listen(lambda change: sizes.append(len(app.vm.blocks)) if change == Reset() else None)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.vm.blocks[-1].text == "said while loading")
        full = 1 + 2 * LOAD_SLICE  # the welcome, then a prompt and an answer a turn
        assert sizes[-1] == full and set(sizes) <= {sizes[0], full}  # never half a session
        assert isinstance(app.vm.blocks[-2], TextBlock)
        assert app.vm.blocks[-2].text == f"answer {LOAD_SLICE}"
        notice = app.vm.blocks[-1]
        assert isinstance(notice, MarkerBlock) and notice.text == "said while loading"
        assert isinstance(app.vm.blocks[1], UserBlock)


async def test_the_collector_waits_while_a_session_opens_and_then_skips_what_it_built() -> None:
    real = FakeLoop(replayed=turns(LOAD_SLICE))
    collecting_while_opening: list[bool] = []

    async def opener() -> LoopApi:
        collecting_while_opening.append(gc.isenabled())
        return real

    app = TuiAgentApp(OpeningLoop(INFO, opener))
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.loop is real)
        # What the load built (the view model's blocks among it) is frozen: in no generation.
        in_generations = {id(thing) for thing in gc.get_objects()}
        assert id(app.vm.blocks) not in in_generations
        assert id(app.vm.blocks[-1]) not in in_generations
        assert collecting_while_opening == [False]
        assert gc.isenabled()


def _long_answer(sections: int) -> str:
    """Markdown as a long answer has it: headings, lists, code and tables (4 blocks a section)."""
    return "".join(
        f"## Part {n}\n\n- one point\n- another, with `code`\n\n"
        f"```python\ndef step_{n}(x):\n    return x * {n}\n```\n\n"
        f"| key | value |\n|---|---|\n| a | {n} |\n\n"
        for n in range(1, sections + 1)
    )


async def test_a_resumed_long_answer_is_drawn_before_the_frame_that_shows_it() -> None:
    answer = _long_answer(30)  # 120 blocks
    last = LOAD_SLICE // 4 + 1  # a transcript long enough to be replayed in slices
    real = FakeLoop(
        replayed=[
            *turns(last - 1),
            ev.TurnStarted(turn_id=last, prompt_ids=("p",), texts=("explain",)),
            ev.StepStarted(turn_id=last, step=1),
            ev.AssistantDelta(turn_id=last, step=1, text=answer),
            ev.TurnFinished(
                turn_id=last, text=answer, result=ev.TurnResult(type="completed", steps=1)
            ),
        ]
    )

    async def opener() -> LoopApi:
        return real

    app = TuiAgentApp(OpeningLoop(INFO, opener))
    async with app.run_test(size=(120, 36)) as pilot:

        def shown_whole() -> AssistantText | None:
            """The answer, once laid out at its last width (the transcript's scrollbar shown)."""
            for view in app.transcript.children:
                if isinstance(view, AssistantText) and view.length == len(answer):
                    inside = app.transcript.scrollable_content_region.width
                    if app.transcript.show_vertical_scrollbar and view.size.width == inside:
                        return view
            return None

        await until(pilot, lambda: shown_whole() is not None)
        await pilot.pause()
        view = shown_whole()
        assert view is not None
        # Every one of its blocks came drawn from the load's slices, at both widths it was
        # laid out at (before and after the scrollbar showed): none was drawn in a frame.
        assert view.blocks_drawn == 0

        def lines() -> list[list[Segment]]:
            settled, tail = view._lines(view.content_size.width)
            return [list(strip) for strip in [*settled, *tail]]

        ahead = lines()
        view._key = None  # drawn again here by Rich, as a view given nothing ahead draws
        assert lines() == ahead
        assert view.blocks_drawn == 120


class _Cyclic(FakeLoop):
    """A loop in a reference cycle, as a real one is (its tasks, machines and callbacks): only
    the cyclic collector can free it."""

    def __init__(self) -> None:
        super().__init__()
        self.me = self


async def test_a_replaced_session_is_given_back_to_the_collector_once_closed() -> None:
    # The new session's opening froze what lived then, the session it replaces among it.
    first = _Cyclic()
    replaced = weakref.ref(first)
    app = TuiAgentApp(first)
    del first
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        second = _Cyclic()

        async def opening() -> LoopApi:
            return second

        await _swap(app, opening())
        await pilot.pause()
        assert app.loop is second
        assert replaced() is None
