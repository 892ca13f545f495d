"""Typing stays instant while an answer streams: a key is painted at once, not at the next of
Textual's 60 frames a second, and streamed text is drawn less often while keys come."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual import events
from textual.app import App
from textual.geometry import Region
from textual.pilot import Pilot

from tests.ui.fake_loop import FakeLoop
from tests.ui.real_loop import until
from tests.ui.terminal import Terminal
from tests.ui.test_delivery import answer_text
from tests.ui.test_keys import Clock, running, turn_running
from tui_agent.loop import events as ev
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.widgets.blocks import AssistantText
from tui_agent.ui.widgets.transcript import TYPING_FRAME_S, TYPING_PAUSE_S


def send_key(app: App[None], key: str) -> None:
    """The key as the terminal sends it (`pilot.press` paints the screen itself)."""
    event = events.Key(key, key)
    event.set_sender(app)
    app._driver.send_message(event)  # type: ignore[union-attr]


async def test_a_key_is_painted_without_waiting_for_the_next_frame() -> None:
    async with running() as (app, _pilot, _loop):
        terminal = Terminal(app)
        app.screen._update_timer.stop()  # no frame comes from Textual's timer any more
        send_key(app, "x")
        prompt = app.prompt_input.region
        for _ in range(2000):
            if any("x" in row for row in terminal.text(prompt)):
                break
            await asyncio.sleep(0.005)
        assert any("x" in row for row in terminal.text(prompt)), terminal.text(prompt)


async def test_streamed_text_waits_a_frame_while_the_user_types() -> None:
    clock = Clock()
    async with running(clock=clock) as (app, pilot, loop):
        turn_running(loop)
        loop.emit(ev.AssistantDelta(turn_id=1, step=1, text="first "))
        await until(pilot, lambda: answer_text(app) == "first ")
        await pilot.press("a")
        loop.emit(ev.AssistantDelta(turn_id=1, step=1, text="second "))
        await until(pilot, lambda: app.transcript.holding)
        assert answer_text(app) == "first "  # drawn in this frame's time already
        clock.now += TYPING_FRAME_S + 0.001
        await until(pilot, lambda: answer_text(app) == "first second ")
        assert not app.transcript.holding
        clock.now += TYPING_PAUSE_S  # no key since: text is drawn as it comes again
        loop.emit(ev.AssistantDelta(turn_id=1, step=1, text="third"))
        await until(pilot, lambda: answer_text(app) == "first second third")
        assert app.prompt_input.text == "a"


async def test_held_streamed_text_is_drawn_as_soon_as_a_key_is_painted() -> None:
    # In the quiet just after a key's echo the answer's frame seldom holds up the next key;
    # drawn at any other moment (by a timer), a key typed meanwhile waited behind it.
    clock = Clock()  # never moves: no timer can find the text due
    async with running(clock=clock) as (app, pilot, loop):
        turn_running(loop)
        loop.emit(ev.AssistantDelta(turn_id=1, step=1, text="first "))
        await until(pilot, lambda: answer_text(app) == "first ")
        send_key(app, "a")
        await until(pilot, lambda: app.prompt_input.text == "a")
        loop.emit(ev.AssistantDelta(turn_id=1, step=1, text="second "))
        await until(pilot, lambda: app.transcript.holding)
        send_key(app, "b")
        await until(pilot, lambda: answer_text(app) == "first second ")
        assert app.prompt_input.text == "ab"


async def test_a_key_is_painted_alone_and_the_rest_waits_for_the_frame() -> None:
    # Painting the answer (or the scroll bar it moved) with the key made the key's paint cost
    # a composite of the whole transcript; it is painted in the frame's own slot instead.
    async with running() as (app, pilot, loop):
        terminal, transcript = await first_words_shown(app, pilot, loop)
        app.screen._update_timer.stop()  # no frame comes from Textual's timer any more
        loop.emit(ev.AssistantDelta(turn_id=1, step=1, text="more"))
        answer = app.transcript.query_one(AssistantText)
        await without_frames(lambda: answer.source == "first more")
        send_key(app, "x")
        prompt = app.prompt_input.region
        await without_frames(lambda: any("x" in row for row in terminal.text(prompt)))
        assert not any("more" in row for row in terminal.text(transcript))
        app.screen._on_timer_update()  # the frame
        assert any("more" in row for row in terminal.text(transcript))


async def test_streamed_text_waits_for_a_key_on_its_way() -> None:
    # A frame the timer starts, or an answer's block drawn, just after a key came (before the
    # app took it) made the key wait for them.
    async with running() as (app, pilot, loop):
        terminal, transcript = await first_words_shown(app, pilot, loop)
        screen = app.main_screen
        waiting = [True]
        screen.input_waiting = lambda: waiting[0]  # type: ignore[method-assign]
        screen._update_timer.stop()  # its frames are the test's calls below
        answer = app.transcript.query_one(AssistantText)
        drawn = answer.blocks_drawn
        loop.emit(ev.AssistantDelta(turn_id=1, step=1, text="more"))
        # Gated on the answer's own deferral: any other widget's call after the next refresh
        # (the work after the first frame, late on a busy machine) made the screen's queue of
        # them non-empty before the answer had looked at the key.
        await without_frames(lambda: answer.source == "first more" and answer._after_key)
        screen._on_timer_update()  # the timer's frame, while the key is on its way
        assert answer.blocks_drawn == drawn
        assert not any("more" in row for row in terminal.text(transcript))
        waiting[0] = False
        screen._on_timer_update()
        assert any("more" in row for row in terminal.text(transcript))


async def first_words_shown(
    app: TuiAgentApp, pilot: Pilot[None], loop: FakeLoop
) -> tuple[Terminal, Region]:
    """A turn running, the first words of its answer on the screen: the terminal and where the
    transcript is on it."""
    terminal = Terminal(app)
    transcript = app.transcript.region
    turn_running(loop)
    loop.emit(ev.AssistantDelta(turn_id=1, step=1, text="first "))
    await until(pilot, lambda: any("first" in row for row in terminal.text(transcript)))
    return terminal, transcript


async def without_frames(condition: Callable[[], bool]) -> None:
    """Let the app run until `condition` holds, painting no frame of its own (`pilot.pause`
    paints one)."""
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the app never reached the expected state")
