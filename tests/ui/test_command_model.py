"""A custom command's `model:` in the app: its turn says it runs on that model (a notice and
the status bar), the step is logged as served by it, and the next prompt goes to the session's
model; a model the session cannot reach refuses the command, and nothing is sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.real_loop import until
from tests.ui.test_flows import StepClock, app_on, send
from tests.ui.test_prompt_power import markers, user_texts
from tui_agent.context import StepEnd, read_log
from tui_agent.session import LoopConfig, Session, open_loop
from tui_agent.ui.app import TuiAgentApp

REVIEW = "---\nmodel: claude-haiku-4-5\n---\nReview $ARGUMENTS"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".tui-agent/commands").mkdir(parents=True)
    (root / ".tui-agent/commands/review.md").write_text(REVIEW)
    return root


async def test_a_commands_turn_runs_on_its_model_and_the_next_on_the_sessions(
    workspace: Path,
) -> None:
    steps = [{"text": "reviewed"}, {"text": "plain answer"}]
    async with app_on(steps, workspace) as (app, pilot, loop):
        await until(pilot, lambda: bool(app.power.commands))
        seen: list[str] = []
        app.vm.listen(lambda change: seen.append(app.vm.status.model))
        await send(pilot, "/review main.py")
        await until(pilot, lambda: "this turn: claude-haiku-4-5" in markers(app))
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
        assert "claude-haiku-4-5" in seen  # the status bar showed the turn's model
        assert app.vm.status.model == "scripted"  # and is back on the session's
        await send(pilot, "plain")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 2)
        session = Session.open(loop.info.session_id)
    assert session is not None
    ends = [r for r in read_log(session.events_path) if isinstance(r, StepEnd)]
    assert [end.model for end in ends] == ["claude-haiku-4-5", None]
    assert markers(app).count("this turn:") == 1


async def test_a_model_the_session_cannot_reach_refuses_the_command(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    loop = await open_loop(LoopConfig(workspace=workspace))  # no key: the built-in demo
    app = TuiAgentApp(loop, clock=StepClock())
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await until(pilot, lambda: bool(app.power.commands))
            await send(pilot, "/review main.py")
            await until(pilot, lambda: "not sent: model claude-haiku-4-5" in markers(app))
            assert "ANTHROPIC_API_KEY is not set" in markers(app)
            assert user_texts(loop) == [] and not app.vm.busy
    finally:
        await app.loop.close()
