"""The plan pane and a sub-agent's row and transcript, through the real loop and keys."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tests.ui.real_loop import until
from tests.ui.test_flows import app_on, approval_shown, send
from tui_agent.session import LoopConfig, open_loop
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.subagent_screen import SubagentScreen
from tui_agent.ui.view_model import TextBlock, ToolBlock, UserBlock
from tui_agent.ui.widgets.blocks import ToolCallBlock


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


async def test_the_plan_pane_shows_the_models_plan_and_its_progress(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    plan = [
        {"content": "read the code", "status": "completed"},
        {"content": "fix the bug", "status": "in_progress"},
        {"content": "run the tests", "status": "pending"},
    ]
    steps = [{"tool_calls": [call("todo_write", todos=plan)]}, {"text": "planned"}]
    async with app_on(steps, workspace) as (app, pilot, _loop):
        assert not app.plan_pane.display  # no plan yet: no pane
        await send(pilot, "plan it")
        await until(pilot, lambda: not app.vm.busy and app.plan_pane.display)
        shown = str(app.plan_pane.render())
        assert "read the code" in shown and "fix the bug" in shown and "run the tests" in shown
        assert app.plan_pane.border_title == "Plan (1/3)"


async def test_enter_on_a_task_row_shows_the_childs_transcript_live(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    gate = workspace / "gate"
    wait_for_gate = f"while [ ! -e {gate} ]; do sleep 0.05; done; echo opened"
    steps = [
        {"tool_calls": [call("task", description="look around", prompt="CHILD JOB")]},
        {"tool_calls": [call("shell", command=wait_for_gate)]},  # the child's first step
        {"text": "child done"},  # the child's answer
        {"text": "all done"},  # the parent's answer
    ]
    async with app_on(steps, workspace) as (app, pilot, _loop):
        await send(pilot, "delegate")
        await until(pilot, lambda: any("shell" in r.recent for r in app.vm.tools.values()))
        row = next(iter(app.vm.tools.values()))
        assert row.name == "task" and row.summary == "look around"

        await pilot.press("ctrl+t")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, SubagentScreen))
        screen = app.screen
        assert isinstance(screen, SubagentScreen)
        assert [b.text for b in screen.vm.blocks if isinstance(b, UserBlock)] == ["CHILD JOB"]
        assert [b.name for b in screen.vm.blocks if isinstance(b, ToolBlock)] == ["shell"]

        gate.touch()
        await until(
            pilot,
            lambda: any(
                isinstance(b, TextBlock) and b.text == "child done" for b in screen.vm.blocks
            ),
        )
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, SubagentScreen))
        await until(pilot, lambda: not app.vm.busy)
        task_block = next(b for b in app.vm.blocks if isinstance(b, ToolBlock))
        assert task_block.name == "task" and task_block.output == "child done"


async def test_a_sub_agents_question_names_its_task_and_stopping_the_task_withdraws_it(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    steps = [
        {"tool_calls": [call("task", description="write notes", prompt="CHILD JOB")]},
        {"tool_calls": [call("write_file", path="notes.txt", content="x\n")]},  # the child's
        # The parent's answer; the child, stopped, may or may not ask for its next step first.
        {"text": "went on"},
        {"text": "went on"},
    ]
    async with app_on(steps, workspace, approval_mode="ask") as (app, pilot, _loop):
        await send(pilot, "delegate")
        await approval_shown(pilot)
        request = app.approval_bar.request
        assert request is not None and request.task == "write notes"
        assert (request.name, request.summary) == ("write_file", "notes.txt")
        assert 'Allow write_file?  (from task "write notes")' in str(
            app.approval_bar._question.render()
        )

        await pilot.press("ctrl+t")
        assert app.tools_pane.highlighted_call_id == request.call_id  # the task's own row
        await pilot.press("delete")
        await until(pilot, lambda: not app.approval_bar.display)  # gone, the turn goes on
        await until(pilot, lambda: not app.vm.busy)
        texts = [b.text for b in app.vm.blocks if isinstance(b, TextBlock)]
        assert texts[-1] == "went on"
        task_block = next(b for b in app.vm.blocks if isinstance(b, ToolBlock))
        assert task_block.name == "task" and task_block.state == "aborted"
        assert not (workspace / "notes.txt").exists()


async def test_a_question_from_a_sub_agent_closes_its_transcript_to_show_the_box(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    child_writes = asyncio.Event()
    steps = [
        {"tool_calls": [call("task", description="write notes", prompt="CHILD JOB")]},
        {"text": "writing", "tool_calls": [call("write_file", path="n.txt", content="x\n")]},
        {"text": "child done"},
        {"text": "all done"},
    ]
    async with app_on(steps, workspace, "ask", holds={1: child_writes}) as (app, pilot, _):
        await send(pilot, "delegate")
        await until(pilot, lambda: bool(app.vm.tools))
        await pilot.press("ctrl+t", "enter")
        await until(pilot, lambda: isinstance(app.screen, SubagentScreen))

        child_writes.set()

        await until(pilot, lambda: not isinstance(app.screen, SubagentScreen))
        await approval_shown(pilot)
        # `focus()` is carried out from the app's queue, after the box shows.
        await until(pilot, lambda: app.focused is app.approval_bar)
        await pilot.press("y")
        await until(pilot, lambda: not app.vm.busy)
        assert (workspace / "n.txt").read_text() == "x\n"


async def test_a_finished_tasks_transcript_opens_from_its_block_also_after_resuming(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    steps = [
        {"tool_calls": [call("task", description="count", prompt="CHILD JOB")]},
        {"text": "child done"},
        {"text": "all done"},
    ]
    async with app_on(steps, workspace) as (app, pilot, loop):
        await send(pilot, "delegate")
        await until(pilot, lambda: not app.vm.busy and len(app.vm.blocks) >= 3)
        session_id = loop.info.session_id
        await open_task_block(app, pilot)
        assert texts_on(app.screen) == ["child done"]

    resumed = await open_loop(
        LoopConfig(workspace=workspace, provider="scripted", resume=session_id)
    )
    app = TuiAgentApp(resumed)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await open_task_block(app, pilot)
            assert texts_on(app.screen) == ["child done"]
    finally:
        await resumed.close()


async def open_task_block(app: TuiAgentApp, pilot: Pilot[None]) -> None:
    await until(pilot, lambda: app.transcript.settled and bool(app.query(ToolCallBlock)))
    block = next(w for w in app.query(ToolCallBlock) if w.block.name == "task")
    block.focus()
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, SubagentScreen))


def texts_on(screen: object) -> list[str]:
    assert isinstance(screen, SubagentScreen)
    return [b.text for b in screen.vm.blocks if isinstance(b, TextBlock)]
