"""What one step costs in machine events (issue 29): counted, never timed.

A step with tool calls whose hooks neither prepare nor need waiting to finish (the product's
after-tool hook, for nearly every result) and nothing to drain afterwards is: one event per
call (its executing phase ends), the agent's and the turn's `tool.settled`, and the next
request's end; the turn walks `acting -> streaming` in one microstep instead of through
`draining` and `gating`. With inputs waiting it still stops at the drain point.
"""

from __future__ import annotations

from tests.kernel.fakes import ScriptedRunner, calls, note, ok, rig, text
from tests.kernel.test_tool import AtOnceHooks
from tui_agent.kernel import Transitioned
from tui_agent.kernel._statemachine_engine import count_steps, use_engine
from tui_agent.kernel.tool import ToolMachine
from tui_agent.vocab import AbortSignal, ToolCall


async def _counted(steps: int) -> tuple[int, int]:
    """Events and microsteps of a turn of `steps` steps with 4 calls each, then an answer."""
    attempts = [calls(*((f"s{step}c{i}", "echo") for i in range(4))) for step in range(steps)]
    with count_steps() as counts:
        r = await rig(
            *attempts, text("done"), runner=ScriptedRunner(echo=ok("x")), hooks=AtOnceHooks()
        )
        await r.run("hi")
    return counts.events, counts.microsteps


async def test_a_step_with_four_calls_takes_seven_events_and_eight_microsteps() -> None:
    one_events, one_micro = await _counted(1)
    three_events, three_micro = await _counted(3)
    # Before issue 29 with such hooks: 16 events and 18 microsteps a step.
    assert ((three_events - one_events) / 2, (three_micro - one_micro) / 2) == (7, 8)


def _turn_targets(events: list[object]) -> list[str]:
    return [e.target for e in events if isinstance(e, Transitioned) and e.machine == "turn"]


async def test_with_nothing_to_drain_the_turn_goes_straight_from_acting_to_streaming() -> None:
    r = await rig(calls(("c1", "echo")), text("done"), runner=ScriptedRunner(echo=ok("x")))
    await r.run("hi")
    assert _turn_targets(r.events) == ["gating", "streaming", "acting", "streaming", "done"]


async def test_a_waiting_reminder_still_stops_the_turn_at_the_drain_point() -> None:
    r = await rig(calls(("c1", "echo")), text("done"), runner=ScriptedRunner(echo=ok("x")))
    await r.agent.remind("todo", note("remember", "reminder"))
    await r.run("hi")
    assert _turn_targets(r.events) == [
        *("gating", "streaming", "acting"),
        *("draining", "gating", "streaming", "done"),
    ]
    assert r.lines()[3] == "user:remember"


async def test_a_reused_tool_machine_plans_its_microsteps_once_for_every_call() -> None:
    """The exit and entry plans of its two microsteps outlive the engine each call replaces."""
    call, errors = ToolCall(id="c1", name="echo"), list[BaseException]()
    with use_engine("kernel"):
        tool = ToolMachine(
            call, ScriptedRunner(echo=ok("x")), AbortSignal(), lambda _: None, errors
        )
    await tool.activate()
    await tool.settled
    planned = dict(tool.__dict__["_kernel_plans"])
    assert planned  # the first call made them
    for index in range(3):
        tool.reuse(call.model_copy(update={"id": f"c{index + 2}"}), AbortSignal())
        await tool.activate()
        await tool.settled
        assert tool.outcome == "succeeded"
    assert tool.__dict__["_kernel_plans"] == planned and errors == []
