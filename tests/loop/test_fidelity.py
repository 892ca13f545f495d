"""Loop behaviours checked against the seed: cancel during tools, stop-batch known up front,
after-step hooks awaited by the step gate, and a steer during the last step.

Each test drives the public service API with the fake model; every wait is on an event the
test controls.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from tests.loop.conftest import LoopMaker
from tests.loop.test_service import held, of_type, recorder, until
from tests.support.fake_model import calls, text
from tui_agent.context import fold, project, read_log
from tui_agent.loop import events as ev
from tui_agent.loop.hooks import Next
from tui_agent.loop.service import LoopOptions, StepDoneContext
from tui_agent.tools import SKIPPED, Tool, ToolAborted, ToolAccesses, ToolArgs, ToolContext
from tui_agent.vocab import FinishReason, ToolResult


class _Named(ToolArgs):
    label: str


class _SideBySide(Tool[_Named]):
    """A test tool that touches nothing, so its calls run side by side."""

    Args = _Named
    read_only: ClassVar[bool] = True

    def accesses(self, args: _Named) -> ToolAccesses:
        return ToolAccesses.none()


class WaitTool(_SideBySide):
    """Runs until its signal aborts, then stops at once (it honours the abort)."""

    name: ClassVar[str] = "wait"
    description: ClassVar[str] = "Waits until stopped."

    def __init__(self) -> None:
        self.started: list[str] = []
        self.all_started = asyncio.Event()
        self.expected = 2

    async def execute(self, args: _Named, ctx: ToolContext) -> ToolResult:
        self.started.append(args.label)
        if len(self.started) >= self.expected:
            self.all_started.set()
        await ctx.signal.wait()
        raise ToolAborted(partial=f"{args.label} stopped")


class StopBatchTool(_SideBySide):
    """Says in its execution descriptor that the calls after it in a batch must not run."""

    name: ClassVar[str] = "stop_here"
    description: ClassVar[str] = "Stops the batch."

    def stops_batch(self, args: _Named) -> bool:
        return True

    async def execute(self, args: _Named, ctx: ToolContext) -> ToolResult:
        return ToolResult(output=f"stopped at {args.label}")


async def test_cancel_while_two_tools_honour_the_abort_ends_the_step_interrupted(
    make_loop: LoopMaker,
) -> None:
    tool = WaitTool()
    two = calls(("wait", {"label": "a"}), ("wait", {"label": "b"}))
    service, _model, log_path = await make_loop(
        [two], tools=(tool,), options=LoopOptions(abort_grace_s=30)
    )
    handle = await service.submit("wait for both")
    await tool.all_started.wait()
    assert await service.cancel()
    assert (await handle.result()).type == "cancelled"
    await service.settled()
    live = project(service.history())
    await service.close()
    records = read_log(log_path)
    assert [r.finish_reason for r in records if r.type == "step.end"] == [FinishReason.INTERRUPTED]
    history = fold(records)
    assert [e.message.role for e in history] == ["user", "assistant", "tool", "tool"]
    assert [e.message.tool_call_id for e in history[2:]] == ["call_0", "call_1"]
    assert all(e.message.is_error for e in history[2:])
    assert project(history) == live


async def test_a_stop_batch_descriptor_keeps_later_calls_from_ever_starting(
    make_loop: LoopMaker,
) -> None:
    tool = WaitTool()
    batch = calls(("stop_here", {"label": "one"}), ("wait", {"label": "never"}))
    service, model, _ = await make_loop(
        [batch, text("done")], tools=(StopBatchTool(), tool), options=LoopOptions(abort_grace_s=30)
    )
    result = await (await service.submit("go")).result()
    assert result.type == "completed"
    assert tool.started == []
    tool_texts = [m.text for m in model.requests[1].messages if m.role == "tool"]
    assert tool_texts[0] == "stopped at one" and SKIPPED in tool_texts[1]


async def test_the_step_gate_awaits_an_after_step_hook_that_stops_the_turn_late(
    make_loop: LoopMaker,
) -> None:
    service, model, _ = await make_loop([calls(("read_file", {"path": "a.txt"})), text("never")])
    entered, release = asyncio.Event(), asyncio.Event()

    async def stop_later(ctx: StepDoneContext, next_: Next[StepDoneContext]) -> None:
        entered.set()
        await release.wait()
        ctx.stop_turn = True
        await next_(None)

    service.on_did_finish_step.register("stop-later", stop_later)
    handle = await service.submit("go")
    await entered.wait()
    release.set()
    result = await handle.result()
    assert result.type == "completed"
    assert len(model.requests) == 1


async def test_a_steer_during_the_last_step_gets_its_own_step_before_it_settles(
    make_loop: LoopMaker,
) -> None:
    first, first_gate = held(text("first answer"))
    second, second_gate = held(text("answer to the steer"))
    service, model, _ = await make_loop([first, second])
    seen = recorder(service)
    handle = await service.submit("hi")
    await until(lambda: len(model.requests) == 1)
    steer = await service.submit("also this", steer_if_active=True)
    assert steer.state == "steered"
    first_gate.set()
    await until(lambda: len(model.requests) == 2)
    assert [(m.role, m.text) for m in model.requests[1].messages] == [
        ("user", "hi"),
        ("assistant", "first answer"),
        ("user", "also this"),
    ]
    assert steer.state == "running"  # in history, not yet answered
    assert [d.prompt_ids for d in of_type(seen, ev.Drained)] == [(steer.id,)]
    second_gate.set()
    result = await steer.result()
    assert result.type == "completed" and result.steps == 2
    assert (await handle.result()) == result
    finished = of_type(seen, ev.TurnFinished)
    assert len(finished) == 1 and finished[0].text == "answer to the steer"


class DeafTool(_SideBySide):
    """Ignores the abort: only the executor's cancellation ends it."""

    name: ClassVar[str] = "deaf"
    description: ClassVar[str] = "Runs until cancelled."

    def __init__(self) -> None:
        self.running = asyncio.Event()

    async def execute(self, args: _Named, ctx: ToolContext) -> ToolResult:
        self.running.set()
        await asyncio.Event().wait()
        raise AssertionError("never reached")


async def test_the_executor_gets_its_abort_grace_from_the_loop_options(
    make_loop: LoopMaker,
) -> None:
    # One configured grace: the executor cancels a tool that ignores the abort within its share
    # of the turn's wait, so the tool's own report (not the turn's bare "aborted") is what the
    # model reads. A fixed executor grace longer than the turn's lost that report.
    tool = DeafTool()
    service, _model, log_path = await make_loop(
        [calls(("deaf", {"label": "a"}))], tools=(tool,), options=LoopOptions(abort_grace_s=1.5)
    )
    assert LoopOptions(abort_grace_s=1.5).tool_abort_grace_s < 1.5
    handle = await service.submit("go")
    await tool.running.wait()
    assert await service.cancel()
    assert (await handle.result()).type == "cancelled"
    await service.settled()
    await service.close()
    [answer] = [e.message for e in fold(read_log(log_path)) if e.message.role == "tool"]
    assert answer.is_error and "manually interrupted" in answer.text
