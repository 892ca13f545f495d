"""How loop events reach the screen: through Textual's queue, with every failure shown, and a
long streamed answer that looks the same once it has finished."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.ui.fake_loop import FakeLoop
from tests.ui.real_loop import scripted_loop, until
from tui_agent.context import ErrorReported, read_log
from tui_agent.loop import events as ev
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.view_model import BlockUpdated, MarkerBlock, TextBlock
from tui_agent.ui.widgets.blocks import AssistantText, Marker
from tui_agent.ui.widgets.transcript import Transcript
from tui_agent.vocab import TokenUsage


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def error_markers(app: TuiAgentApp) -> list[str]:
    return [b.text for b in app.vm.blocks if isinstance(b, MarkerBlock) and b.kind == "error"]


async def test_a_subscriber_that_raises_is_shown_and_nobody_loses_an_event(
    workspace: Path,
) -> None:
    loop = await scripted_loop([{"text": "All done here, nothing else."}], workspace=workspace)
    seen: list[ev.LoopEvent] = []

    def broken(event: ev.LoopEvent) -> None:
        if isinstance(event, ev.AssistantDelta):
            raise RuntimeError("widget bug")

    app = TuiAgentApp(loop)
    try:
        async with app.run_test(size=(100, 30), notifications=True) as pilot:
            loop.subscribe(broken)  # after the app's own subscription, before the recorder
            loop.subscribe(seen.append)
            app.prompt_input.load_text("go")
            await pilot.press("enter")
            await until(pilot, lambda: bool(error_markers(app)) and not app.vm.busy)
            assert "widget bug" in error_markers(app)[0]
            await until(pilot, lambda: any("widget bug" in str(m.render()) for m in markers(app)))
            # The app (before the raising subscriber) and the recorder (after it) saw it all.
            answer = "".join(e.text for e in seen if isinstance(e, ev.AssistantDelta))
            assert answer == "All done here, nothing else."
            texts = [b.text for b in app.vm.blocks if isinstance(b, TextBlock)]
            assert "".join(texts) == "All done here, nothing else."  # the notice may split it
            finished = [e for e in seen if isinstance(e, ev.TurnFinished)]
            assert [e.result.type for e in finished] == ["completed"]
    finally:
        await app.loop.close()
    assert errors_in_logs() == [error_markers(app)[0]]


def errors_in_logs() -> list[str]:
    logs = Path(os.environ["TUI_AGENT_HOME"]).rglob("events.jsonl")
    return [r.text for path in logs for r in read_log(path) if isinstance(r, ErrorReported)]


def markers(app: TuiAgentApp) -> list[Marker]:
    return list(app.transcript.query(Marker))


async def test_a_view_model_failure_becomes_an_error_line_and_later_events_still_show() -> None:
    loop = FakeLoop()
    app = TuiAgentApp(loop)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        apply = app.vm.apply

        def failing(event: ev.LoopEvent) -> None:
            if isinstance(event, ev.UsageChanged):
                raise ValueError("bad usage")
            apply(event)

        app.vm.apply = failing  # type: ignore[method-assign]
        turn(loop)
        loop.emit(ev.UsageChanged(total=TokenUsage(), context_tokens=1, context_window=2))
        loop.emit(ev.AssistantDelta(turn_id=1, step=1, text="still here"))
        await until(pilot, lambda: bool(error_markers(app)))
        assert "showing a usage event failed: ValueError('bad usage')" in error_markers(app)[0]
        await until(pilot, lambda: any(isinstance(b, TextBlock) for b in app.vm.blocks))
        assert app.is_running and app._notifications  # a toast too


async def test_a_drawing_failure_is_a_toast_and_the_transcript_goes_on() -> None:
    loop = FakeLoop()
    app = TuiAgentApp(loop)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        apply = app.transcript.apply

        async def failing(change: Any) -> None:
            if isinstance(change, BlockUpdated):
                raise KeyError("no such widget")
            await apply(change)

        app.transcript.apply = failing  # type: ignore[method-assign]
        turn(loop)
        loop.emit(
            ev.Retrying(
                turn_id=1,
                step=1,
                attempt=2,
                max_attempts=3,
                delay_s=1,
                error_code="http.429",
                message="slow down",
            )
        )
        loop.emit(ev.StepStarted(turn_id=1, step=1))  # resolves the retry: a BlockUpdated
        loop.emit(ev.AssistantDelta(turn_id=1, step=1, text="after the failure"))
        await until(pilot, lambda: bool(app._notifications))
        assert "drawing a BlockUpdated change failed" in next(iter(app._notifications)).message
        await until(pilot, lambda: bool(app.transcript.query(AssistantText)))


def turn(loop: FakeLoop) -> None:
    loop.emit(
        ev.TurnStarted(turn_id=1, prompt_ids=("p1",), texts=("go",)),
        ev.StepStarted(turn_id=1, step=1),
    )


def long_answer() -> str:
    """About 10 KB of Markdown: headings, paragraphs, nested lists, fences, tables."""
    parts: list[str] = []
    for n in range(1, 28):
        parts += [
            f"## Part {n}\n\nThis part explains **step {n}** with `inline code`; the text is "
            "long enough to wrap across two lines of the transcript at this width.\n\n",
            "- first point\n- second point, with `code`\n  - a nested point\n- third point\n\n",
            f"```python\ndef handler_{n}(event):\n    return route(event, {n})\n```\n\n",
            f"| name | value |\n|---|---|\n| alpha | {n} |\n| beta | {n * 2} |\n\n",
        ]
    return "".join(parts)


def transcript_rows(app: TuiAgentApp) -> list[list[tuple[str, str]]]:
    """The transcript's rows as drawn: (text, style) runs, cell by cell."""
    region = app.transcript.region
    strips = app.screen._compositor.render_strips()
    rows = []
    for strip in strips[region.y : region.bottom]:
        cells = []
        for segment in strip.crop(region.x, region.right):
            cells += [(char, str(segment.style)) for char in segment.text]
        rows.append(cells)
    return rows


async def scroll_and_grab(app: TuiAgentApp, pilot: Pilot[None], y: int) -> Any:
    """Scroll back to row `y` and take the transcript once it has stopped changing."""
    app.transcript.release_anchor()  # as a person scrolling back
    app.transcript.scroll_to(y=y, animate=False, immediate=True)
    await until(pilot, lambda: app.transcript.scroll_y == y)
    shots: list[Any] = []

    def steady() -> bool:
        shots.append(transcript_rows(app))
        return len(shots) > 1 and shots[-1] == shots[-2]

    await until(pilot, steady)
    return shots[-1]


@pytest.mark.timeout(240)  # it takes the transcript cell by cell, frame after frame
async def test_a_long_answer_looks_the_same_streaming_and_finished() -> None:
    text = long_answer()
    assert len(text) > 9000
    loop = FakeLoop()
    app = TuiAgentApp(loop)
    async with app.run_test(size=(100, 40)) as pilot:
        turn(loop)
        for start in range(0, len(text), 7):
            loop.emit(ev.AssistantDelta(turn_id=1, step=1, text=text[start : start + 7]))
        transcript: Transcript = app.transcript
        await until(pilot, lambda: answer_text(app) == text)
        await until(pilot, lambda: transcript.max_scroll_y > 100)
        positions = [0, transcript.max_scroll_y // 2]
        streaming = [await scroll_and_grab(app, pilot, y) for y in positions]
        loop.emit(
            ev.StepCompleted(
                turn_id=1, step=1, text=text, thinking="", finish_reason="stop", usage=None
            ),
            ev.TurnFinished(turn_id=1, text=text, result=ev.TurnResult(type="completed", steps=1)),
        )
        await until(pilot, lambda: not app.vm.busy)
        finished = [await scroll_and_grab(app, pilot, y) for y in positions]
        assert finished == streaming


def answer_text(app: TuiAgentApp) -> str:
    """The text the answer's widget has drawn (all it holds once the screen caught up)."""
    answers = list(app.transcript.query(AssistantText))
    return answers[0].source[: answers[0].drawn_chars] if answers else ""
