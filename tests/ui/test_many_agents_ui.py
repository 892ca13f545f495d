"""Eight sub-agents at once: what one of their calls costs the screen, counted, not timed.

Each call a sub-agent starts reaches the app as progress on its `task` row. It must redraw that
row alone (not the whole tools pane), and never ask for a layout of the screen: neither the
task's one-row header in the transcript nor the one-row status bar can change size.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widget import Widget

from tests.ui.fake_loop import FakeLoop
from tests.ui.real_loop import until
from tests.ui.test_keys import running, turn_running
from tui_agent.loop import events as ev
from tui_agent.loop.api import SubagentRun
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.subagent_screen import SubagentScreen
from tui_agent.ui.widgets.blocks import ToolCallBlock

AGENTS = 8


async def eight_tasks(app: TuiAgentApp, pilot: Pilot[None], loop: FakeLoop) -> None:
    turn_running(loop)
    for n in range(AGENTS):
        arguments = json.dumps({"description": f"job {n}", "prompt": "look"})
        loop.emit(
            ev.ToolStarted(id=f"t{n}", name="task", arguments=arguments),
            ev.ToolStateChanged(id=f"t{n}", name="task", state="running"),
        )
    await until(pilot, lambda: app.tools_pane.option_count == AGENTS)
    await until(pilot, lambda: len(app.transcript.query(ToolCallBlock)) == AGENTS)
    await pilot.pause()


def layouts_asked(widget: Widget) -> list[bool]:
    """Record, for each refresh the widget asks for from now on, whether it wants a layout."""
    asked: list[bool] = []
    refresh: Callable[..., Any] = widget.refresh

    def spy(*regions: Any, **options: Any) -> Any:
        asked.append(bool(options.get("layout")))
        return refresh(*regions, **options)

    widget.refresh = spy  # type: ignore[method-assign]
    return asked


async def test_a_sub_agents_call_redraws_only_its_own_task_row() -> None:
    async with running() as (app, pilot, loop):
        await eight_tasks(app, pilot, loop)
        pane = app.tools_pane
        before = pane.row_draws

        loop.emit(ev.ToolUpdated(id="t3", text="→ grep def handler\n"))
        await until(pilot, lambda: "grep def handler" in pane.row_text(3))
        await pilot.pause()

        assert pane.row_draws == before + 1
        assert all("grep" not in pane.row_text(n) for n in range(AGENTS) if n != 3)


async def test_a_sub_agents_calls_never_lay_out_the_screen() -> None:
    async with running() as (app, pilot, loop):
        await eight_tasks(app, pilot, loop)
        block = next(b for b in app.transcript.query(ToolCallBlock) if b.block.call_id == "t5")
        header = layouts_asked(block.query_one(".header"))
        status = layouts_asked(app.main_screen.status_bar)

        for n in range(3):
            loop.emit(ev.ToolUpdated(id="t5", text=f"→ read_file src/m{n}.py\n"))
            await until(pilot, lambda n=n: f"m{n}.py" in app.tools_pane.row_text(5))
        await pilot.pause()

        assert header and not any(header)  # the header changed (its line count), in place
        assert not any(status)  # nothing on the status line changed: not even redrawn


async def test_an_open_sub_agent_transcript_takes_a_burst_of_chunks_in_one_pass(
    tmp_path: Path,
) -> None:
    async with running() as (app, pilot, _loop):
        run = SubagentRun("t1", "job 1", tmp_path / "t1.jsonl", "running", loop=FakeLoop())
        app.push_screen(SubagentScreen(run, app.loop.info, "job 1"))
        await until(pilot, lambda: isinstance(app.screen, SubagentScreen))
        screen = app.screen
        assert isinstance(screen, SubagentScreen)
        await until(pilot, lambda: screen.is_mounted)
        scheduled: list[object] = []
        call_later = app.call_later

        def spy(callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool:
            scheduled.append(callback)
            return call_later(callback, *args, **kwargs)

        app.call_later = spy  # type: ignore[method-assign]
        run.record(ev.TurnStarted(turn_id=1, prompt_ids=("p",), texts=("JOB",)))
        run.record(ev.StepStarted(turn_id=1, step=1))
        for n in range(40):
            run.record(ev.AssistantDelta(turn_id=1, step=1, text=f"chunk {n} "))

        assert len(scheduled) == 1  # one pass for the burst, not one per chunk
        await until(pilot, lambda: "chunk 39" in "".join(screen.vm.answers()))
