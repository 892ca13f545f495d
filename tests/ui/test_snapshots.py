"""SVG snapshots of the main states, recorded from the real loop (fixed size, theme, clock and
ids; see scenes.py): a change in what the loop emits for a scene's script fails its snapshot.

Review every change by eye (`pytest --snapshot-update`, then open the report or render the SVG).
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from tests.ui.real_loop import until
from tests.ui.scenes import SCENES, make_app, play_scene, scene_app, settle
from tests.ui.test_delivery import answer_text, long_answer, transcript_rows, turn
from tui_agent.loop import events as ev


@pytest.mark.parametrize("name", sorted(SCENES))
def test_scene_looks_as_reviewed(name: str, snap_compare: Any) -> None:
    scene = SCENES[name]
    app, loop, clock = scene_app(scene)

    async def run_before(pilot: Pilot[None]) -> None:
        await play_scene(scene, app, pilot, loop, clock)

    assert snap_compare(app, terminal_size=scene.size, run_before=run_before)


def test_a_long_answer_finished_looks_as_it_did_streaming(snap_compare: Any) -> None:
    # The snapshot is the finished answer at its end (tables, lists, fences); before it is
    # taken, the transcript must be cell for cell what it was while the answer streamed.
    text = long_answer()
    app, loop, _clock = make_app()

    async def run_before(pilot: Pilot[None]) -> None:
        turn(loop)
        for start in range(0, len(text), 7):
            loop.emit(ev.AssistantDelta(turn_id=1, step=1, text=text[start : start + 7]))
        await until(pilot, lambda: answer_text(app) == text)
        await settle(app, pilot)
        streaming = transcript_rows(app)
        loop.emit(
            ev.StepCompleted(
                turn_id=1, step=1, text=text, thinking="", finish_reason="stop", usage=None
            ),
            ev.TurnFinished(turn_id=1, text=text, result=ev.TurnResult(type="completed", steps=1)),
        )
        await until(pilot, lambda: not app.vm.busy)
        await settle(app, pilot)
        assert transcript_rows(app) == streaming

    assert snap_compare(app, terminal_size=(100, 40), run_before=run_before)
