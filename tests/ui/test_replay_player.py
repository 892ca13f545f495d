"""The replay player: the app on a session's rerun, stepped and paced by the person's keys.

Each test starts the player paused on a recorded log and waits on the rerun's own state (a
beat held by the pause, the records written), never on time.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.rerun.conftest import corpus, corpus_home  # noqa: F401 - the rerun tests' corpus
from tests.rerun.corpus import Corpus
from tests.ui.real_loop import until
from tests.ui.scenes import FixedClock, settle
from tui_agent.context import read_log
from tui_agent.ui.inspector import MachineInspector
from tui_agent.ui.replay_player import ReplayPlayer
from tui_agent.ui.state import MarkerBlock, ToolBlock
from tui_agent.ui.widgets.approval_bar import ApprovalBar

R3 = Path(__file__).parents[1] / "loop" / "data" / "r3" / "session.jsonl"


@pytest.fixture
def workdir() -> Iterator[Path]:
    # A fixed path: the welcome block names the rerun's workspace, and a snapshot shows it.
    path = Path(tempfile.gettempdir()) / "tui-agent-replay-test"
    shutil.rmtree(path, ignore_errors=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _player(log: Path, workdir: Path) -> ReplayPlayer:
    return ReplayPlayer(read_log(log), workdir, paused=True, clock=FixedClock())


async def _held(app: ReplayPlayer, pilot: Pilot[Any]) -> int:
    """Until the rerun waits on the pause again; where it is."""
    await until(pilot, lambda: app.pace.waiting > 0 and not app.pace._permits)
    return app.conductor.position


def _next_kind(app: ReplayPlayer) -> str:
    return app.conductor.records[app.conductor.position].type


async def test_the_player_starts_paused_and_right_lets_one_event_through(workdir: Path) -> None:
    app = _player(R3, workdir)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await _held(app, pilot) == 0
        assert _next_kind(app) == "turn.begin"  # the first prompt waits for the person
        await pilot.press("right")
        # The prompt went in: the loop began its turn and its first step, then asked the
        # model, whose first answer (the recorded HTTP 429) waits on the pause.
        assert await _held(app, pilot) == 3
        assert app.vm.machines.states["turn-0"] == "streaming"
        assert "❚❚ paused" in str(app.replay_bar.render())


async def test_shift_right_plays_to_the_next_step_and_bracket_to_the_next_turn(
    workdir: Path,
) -> None:
    app = _player(R3, workdir)
    async with app.run_test(size=(120, 40)) as pilot:
        await _held(app, pilot)
        await pilot.press("shift+right")
        await until(pilot, lambda: app.pace.paused and app.pace.waiting > 0)
        written = app.conductor.records[: app.conductor.position]
        # Past the first step's end (its tools ran), held before the second step's answer.
        assert [r.type for r in written].count("step.end") == 1
        assert app.vm.machines.states["turn-0"] == "streaming"
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: app.pace.paused and app.pace.waiting > 0)
        written = [r.type for r in app.conductor.records[: app.conductor.position]]
        assert written[-2:] == ["turn.end", "user.command"]  # a `!command` is copied over
        assert _next_kind(app) == "turn.begin"
        assert app.vm.machines.states["turn-0"] == "done"


async def test_space_plays_the_session_through_and_the_bar_gives_the_verdict(
    workdir: Path,
) -> None:
    app = _player(R3, workdir)
    async with app.run_test(size=(120, 40)) as pilot:
        await _held(app, pilot)
        await pilot.press("minus")
        assert app.pace.speed == 0.5
        for _ in range(7):
            await pilot.press("plus")  # ×0.5 up to the fastest, ×64, and no further
        assert app.pace.speed == 64.0
        await pilot.press("space")
        await until(pilot, lambda: app.verdict is not None)
        assert app.verdict is not None and app.verdict.ok
        assert "finished: identical: 64 records" in str(app.replay_bar.render())
        markers = [block.text for block in app.vm.blocks if isinstance(block, MarkerBlock)]
        assert markers.count("interrupted") == 2  # the cancels were replayed
        assert "turn failed: llm.auth: bad key" in markers
        rows = [block for block in app.vm.blocks if isinstance(block, ToolBlock)]
        assert "!" in [row.name for row in rows]  # the `!ls` the person ran


async def test_a_crash_in_the_log_plays_on_in_the_resumed_process(
    corpus: Corpus,  # noqa: F811 - the fixture imported above
    workdir: Path,
) -> None:
    app = _player(corpus.crash.events_path, workdir)
    async with app.run_test(size=(120, 40)) as pilot:
        await _held(app, pilot)
        first = app.loop
        for _ in range(7):
            await pilot.press("plus")
        await pilot.press("space")
        await until(pilot, lambda: app.verdict is not None)
        assert app.verdict is not None and app.verdict.ok, app.verdict.describe()
        assert app.loop is not first  # the resumed process's loop


def test_the_inspector_shows_the_machines_mid_replay(workdir: Path, snap_compare: Any) -> None:
    app = _player(R3, workdir)

    async def run_before(pilot: Pilot[None]) -> None:
        await _held(app, pilot)
        await pilot.press("right_square_bracket")  # the first turn, then the second's start
        await until(pilot, lambda: _next_kind(app) == "turn.begin" and app.pace.waiting > 0)
        for _ in range(4):
            await pilot.press("right")
            await _held(app, pilot)
        await pilot.press("f2")
        await until(pilot, lambda: isinstance(app.screen, MachineInspector))
        await settle(app, pilot)

    assert snap_compare(app, terminal_size=(110, 36), run_before=run_before)


async def test_the_approval_bar_shows_where_the_person_was_asked_and_right_answers_it(
    corpus: Corpus,  # noqa: F811 - the fixture imported above
    workdir: Path,
) -> None:
    app = _player(corpus.asked.events_path, workdir)
    async with app.run_test(size=(120, 40)) as pilot:
        await _held(app, pilot)
        # Allowed, the call runs (its recorded result waits on the pause); denied, it never
        # does; withdrawn by a cancel, one → cancels the turn as the person did.
        shown = (("a_0", "running"), ("b_0", "denied"), ("c_0", "running"), ("e_0", "denied"))
        for call_id, state in shown:
            while not (app.approval_bar.display and app.approval_bar.request is not None):
                await pilot.press("right")
                await _held(app, pilot)
            request = app.approval_bar.request
            assert request is not None and request.call_id == call_id
            assert _next_kind(app) == "approval.answered"  # held: the recorded answer waits
            await pilot.press("right")
            await until(pilot, lambda: not app.approval_bar.display)
            await until(pilot, lambda c=call_id, s=state: _tool(app, c).state == s)


def _tool(app: ReplayPlayer, call_id: str) -> ToolBlock:
    return next(b for b in app.vm.blocks if isinstance(b, ToolBlock) and b.call_id == call_id)


async def test_the_person_cannot_answer_the_bar_in_place_of_the_log(
    corpus: Corpus,  # noqa: F811 - the fixture imported above
    workdir: Path,
) -> None:
    app = _player(corpus.asked.events_path, workdir)
    async with app.run_test(size=(120, 40)) as pilot:
        await _held(app, pilot)
        while not (app.approval_bar.display and app.approval_bar.request is not None):
            await pilot.press("right")
            await _held(app, pilot)
        app.approval_bar.post_message(
            ApprovalBar.Answered(app.approval_bar.request.request_id, "deny", None)
        )
        await pilot.press("space")  # plays on: the log's "once" is the answer that counts
        await until(pilot, lambda: app.verdict is not None)
        assert app.verdict is not None and app.verdict.ok, app.verdict.describe()
