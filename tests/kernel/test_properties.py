"""Property tests: whatever the interleaving of tool completions, failures, detaches and
aborts, every tool call is answered exactly once, in call order, before any other message; and
usage is never lost once a stream finished."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.kernel.fakes import (
    Gate,
    Rig,
    ScriptedRequester,
    ScriptedRunner,
    calls,
    prompt,
    settle,
    text,
)
from tui_agent.kernel import StepAnswered, ToolRunContext
from tui_agent.vocab import HistoryEntry, TokenUsage, ToolCall, ToolResult

ACTIONS = ("succeed", "fail", "detach", "partial_on_abort", "raise_on_abort")


@dataclass
class Plan:
    steps: list[list[str]]  # per LLM step, one action per call
    order: list[int | str]  # call indices to release, and "abort" markers


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    steps = draw(
        st.lists(st.lists(st.sampled_from(ACTIONS), min_size=1, max_size=4), min_size=1, max_size=3)
    )
    total = sum(len(s) for s in steps)
    releases: list[int | str] = list(draw(st.permutations(range(total))))
    aborts = draw(st.lists(st.integers(min_value=0, max_value=total), max_size=2))
    for position in sorted(aborts, reverse=True):
        releases.insert(position, "abort")
    return Plan(steps, releases)


class PlannedRunner(ScriptedRunner):
    """Each call waits for its own release, then does what the plan says."""

    def __init__(self, actions: dict[str, str]) -> None:
        super().__init__()
        self.actions = actions
        self.gates: dict[str, Gate] = {call_id: Gate() for call_id in actions}

    async def run(self, call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        self.runs.append(call.id)
        action = self.actions[call.id]
        if action == "detach":
            ctx.detach(f"ack {call.id}")
        if action in ("partial_on_abort", "raise_on_abort"):
            reason = await _first(self.gates[call.id].event.wait(), ctx.signal.wait())
            if reason is not None and action == "raise_on_abort":
                raise RuntimeError("stopped")
            return ToolResult(output=f"partial {call.id}" if reason else f"ok {call.id}")
        await self.gates[call.id].event.wait()
        if action == "fail":
            raise RuntimeError(f"fail {call.id}")
        return ToolResult(output=f"ok {call.id}")


async def _first(release: object, aborted: object) -> str | None:
    """None when released first, else the abort reason."""
    tasks = [asyncio.ensure_future(release), asyncio.ensure_future(aborted)]  # type: ignore[arg-type]
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    return None if tasks[0] in done else str(tasks[1].result())


USAGE = TokenUsage(input_other=7, output=3)


def check_pairing(history: tuple[HistoryEntry, ...]) -> None:
    for i, entry in enumerate(history):
        call_ids = [c.id for c in entry.message.tool_calls]
        if not call_ids:
            continue
        answers = history[i + 1 : i + 1 + len(call_ids)]
        assert [a.message.role for a in answers] == ["tool"] * len(call_ids)
        assert [a.message.tool_call_id for a in answers] == call_ids
    tool_ids = [e.message.tool_call_id for e in history if e.message.role == "tool"]
    assert len(tool_ids) == len(set(tool_ids))


async def scenario(plan: Plan) -> None:
    actions: dict[str, str] = {}
    attempts = []
    index = 0
    for step in plan.steps:
        specs = []
        for action in step:
            call_id = f"c{index}"
            actions[call_id] = action
            specs.append((call_id, "t"))
            index += 1
        attempts.append(calls(*specs, usage=USAGE))
    end = text("end", usage=USAGE)
    runner = PlannedRunner(actions)
    rig = await Rig(ScriptedRequester(*attempts, fallback=end), runner).start()
    ids = list(actions)
    await rig.agent.submit(prompt("go"))
    await settle()
    for item in plan.order:
        if item == "abort":
            await rig.agent.abort()
        else:
            runner.gates[ids[int(item)]].open()
        await settle()
    await rig.agent.abort()
    await rig.agent.abort()
    await rig.agent.idle()
    for gate in runner.gates.values():
        gate.open()
    await settle()
    await rig.agent.idle()
    await rig.agent.close()

    history = rig.agent.history
    check_pairing(history)
    for completed in rig.of(StepAnswered):
        assert completed.entry in history
        assert completed.entry.meta.usage == USAGE
    assert rig.agent.errors == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans())
def test_every_call_is_answered_once_in_call_order_and_usage_is_kept(plan: Plan) -> None:
    asyncio.run(scenario(plan))
