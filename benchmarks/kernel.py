"""Kernel overhead: what the three StateCharts cost on top of the work itself.

Prints a table:
- microseconds per streamed chunk through the turn machine (one long text stream);
- milliseconds of kernel overhead per step (zero-latency scripted requester, 4 tool calls per
  step, 1,000 steps in one turn, tools that answer at once), without tool hooks and with the
  product's (the loop's after-tool hook, `loop/adapters/engine.py`, over a listener that only
  passes the result on);
- what one machine event costs when its transition does nothing (a one-state chart), the unit
  a step pays 7 times over, besides its 4 tool machines' activations (the floor of a step);
- the machine events and microsteps per step in both configurations (counted on a separate run
  through `count_steps`, so the counting costs the timed runs nothing), and the Python function
  calls per step (cProfile's count on another separate run: unlike the times, it does not
  depend on the machine's load);
- the same bookkeeping in a bare asyncio loop (accumulate deltas, build the vocab messages,
  run the 4 calls concurrently as tasks, append results in call order), and the ratio.

Times are CPU time of this process (`time.process_time`): the work is CPU-bound (zero-latency
ports), and CPU time keeps other load on a shared machine out of the figures.

Run: `.venv/bin/python benchmarks/kernel.py` (targets: <= 2 us/chunk, <= 2 ms/step, <= 3x);
`--quick` runs 300 steps and 5,000 chunks, best of 2 (about 15 s).
`--engine stock` measures the machines on python-statemachine's own async engine instead of
the kernel's; `--engine both` measures both and prints them side by side (is ours still worth
it?).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import pstats
import time
from collections.abc import AsyncIterator, Sequence
from typing import get_args

from statemachine import State

from tui_agent.kernel import (
    Agent,
    KernelEvent,
    KernelOptions,
    ToolHooks,
    ToolRunContext,
    ToolSettled,
)
from tui_agent.kernel._statemachine_engine import (
    EngineChart,
    EngineKind,
    StepCounts,
    count_steps,
    use_engine,
)
from tui_agent.kernel.tool import ToolMachine
from tui_agent.loop.adapters.engine import AfterToolHook
from tui_agent.vocab import (
    AbortSignal,
    EntryMeta,
    Finish,
    Finished,
    FinishReason,
    HistoryEntry,
    Message,
    RequestSent,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallDelta,
    ToolResult,
    user_message,
)

CHUNKS = 20_000
STEPS = 1_000
CALLS_PER_STEP = 4
ROUNDS = 3


def step_events(step: int) -> list[StreamEvent]:
    events: list[StreamEvent] = [RequestSent(), TextDelta(text="working")]
    for index in range(CALLS_PER_STEP):
        call_id = f"s{step}c{index}"
        events.append(ToolCallDelta(index=index, id=call_id, name="echo", arguments='{"a":'))
        events.append(ToolCallDelta(index=index, arguments=" 1}"))
    events.append(Finished(finish=Finish(reason=FinishReason.TOOL_USE)))
    return events


def text_events(chunks: int) -> list[StreamEvent]:
    return [
        RequestSent(),
        *(TextDelta(text="x") for _ in range(chunks)),
        Finished(finish=Finish(reason=FinishReason.END_TURN)),
    ]


END: list[StreamEvent] = [
    RequestSent(),
    TextDelta(text="done"),
    Finished(finish=Finish(reason=FinishReason.END_TURN)),
]


class Requester:
    def __init__(self, attempts: list[list[StreamEvent]]) -> None:
        self.attempts = attempts
        self.index = 0

    def stream(
        self, history: Sequence[HistoryEntry], signal: AbortSignal
    ) -> AsyncIterator[StreamEvent]:
        events = self.attempts[self.index] if self.index < len(self.attempts) else END
        self.index += 1
        return self._play(events)

    async def _play(self, events: list[StreamEvent]) -> AsyncIterator[StreamEvent]:
        for event in events:
            yield event


class Listener:
    """The part of the loop's policy the after-tool hook calls: here it passes results on."""

    def finish_tool_at_once(self, call: ToolCall, result: ToolResult) -> ToolResult | None:
        return result

    async def finish_tool(self, call: ToolCall, result: ToolResult) -> ToolResult:
        return result


def product_hooks() -> ToolHooks:
    return AfterToolHook(Listener())  # type: ignore[arg-type]


class Runner:
    def begin_batch(self, calls: Sequence[ToolCall], signal: AbortSignal) -> None:
        pass

    async def run(self, call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        return ToolResult(output="ok")


async def through_kernel(
    attempts: list[list[StreamEvent]], hooks: ToolHooks | None = None
) -> float:
    emitted: list[KernelEvent] = []

    def emit(event: KernelEvent) -> None:
        emitted.append(event)

    agent = Agent(Requester(attempts), Runner(), emit, options=KernelOptions(), tool_hooks=hooks)
    await agent.start()
    prompt = HistoryEntry(message=user_message("go"), meta=EntryMeta(source="input"))
    start = time.process_time()
    await agent.submit(prompt)
    await agent.idle()
    elapsed = time.process_time() - start
    assert agent.errors == [], agent.errors
    outcomes = {event.outcome for event in emitted if isinstance(event, ToolSettled)}
    assert outcomes <= {"succeeded"}, outcomes  # a benchmark of failing calls would mislead
    return elapsed


async def counted(attempts: list[list[StreamEvent]], hooks: ToolHooks | None) -> StepCounts:
    """The events and microsteps of one run (of every machine, start and end included)."""
    with count_steps() as counts:
        await through_kernel(attempts, hooks)
    return counts


async def python_calls(attempts: list[list[StreamEvent]], hooks: ToolHooks | None) -> int:
    """The Python function calls of one run (cProfile counts every call and every resumption
    of a coroutine; the figure is independent of the machine's load)."""
    profile = cProfile.Profile()
    profile.enable()
    try:
        await through_kernel(attempts, hooks)
    finally:
        profile.disable()
    return int(pstats.Stats(profile).total_calls)  # type: ignore[attr-defined]


async def bare_asyncio(attempts: list[list[StreamEvent]]) -> float:
    """The same bookkeeping without machines: the baseline the kernel is compared with."""
    requester, runner = Requester(attempts), Runner()
    history = [HistoryEntry(message=user_message("go"), meta=EntryMeta(source="input"))]
    start = time.process_time()
    while True:
        texts: list[str] = []
        calls: dict[int, list[str]] = {}
        signal = AbortSignal()
        async for event in requester.stream(history, signal):
            if isinstance(event, TextDelta):
                texts.append(event.text)
            elif isinstance(event, ToolCallDelta):
                entry = calls.setdefault(event.index, [event.id or "", event.name or ""])
                entry.append(event.arguments)
        tool_calls = tuple(
            ToolCall(id=c[0], name=c[1], arguments="".join(c[2:])) for c in calls.values()
        )
        message = Message(
            role="assistant", content=(TextPart(text="".join(texts)),), tool_calls=tool_calls
        )
        history.append(HistoryEntry(message=message, meta=EntryMeta(source="llm")))
        if not tool_calls:
            break
        runner.begin_batch(tool_calls, signal)
        results = await asyncio.gather(
            *(runner.run(call, _Ctx(signal)) for call in tool_calls)  # type: ignore[arg-type]
        )
        for call, result in zip(tool_calls, results, strict=True):
            tool = Message(role="tool", content=(TextPart(text=result.text),), tool_call_id=call.id)
            history.append(HistoryEntry(message=tool, meta=EntryMeta(source="tool")))
    return time.process_time() - start


async def one_tool_machine(count: int) -> float:
    """Build, activate and run `count` tool machines to their final state (no hooks)."""
    runner, call = Runner(), ToolCall(id="c", name="echo")
    errors: list[BaseException] = []
    start = time.process_time()
    for _ in range(count):
        tool = ToolMachine(call, runner, AbortSignal(), lambda event: None, errors)
        await tool.activate()
        await tool.settled
    return time.process_time() - start


async def one_reused_tool_machine(count: int) -> float:
    """The same with one machine reused for every call, as the agent does."""
    runner, call = Runner(), ToolCall(id="c", name="echo")
    errors: list[BaseException] = []
    tool = ToolMachine(call, runner, AbortSignal(), lambda event: None, errors)
    await tool.activate()
    await tool.settled
    start = time.process_time()
    for _ in range(count):
        tool.reuse(call, AbortSignal())
        await tool.activate()
        await tool.settled
    return time.process_time() - start


class Idle(EngineChart):
    """The least a machine event can do: a targetless transition with no callbacks."""

    live = State(initial=True)
    done = State(final=True)
    ping = live.to(None)  # type: ignore[arg-type]
    stop = live.to(done)


async def one_idle_event(count: int) -> float:
    chart = Idle()
    await chart.activate_initial_state()
    start = time.process_time()
    for _ in range(count):
        await chart.send("ping")
    elapsed = time.process_time() - start
    await chart.send("stop")
    return elapsed


async def one_bare_call(count: int) -> float:
    runner, call = Runner(), ToolCall(id="c", name="echo")
    start = time.process_time()
    for _ in range(count):
        await asyncio.ensure_future(runner.run(call, _Ctx(AbortSignal())))  # type: ignore[arg-type]
    return time.process_time() - start


class _Ctx:
    def __init__(self, signal: AbortSignal) -> None:
        self.signal = signal


def best(runs: list[float]) -> float:
    return min(runs)


Row = tuple[str, float, float, float | None, str]


async def measure() -> list[Row]:
    gc.collect()
    chunk_runs = [await through_kernel([text_events(CHUNKS)]) for _ in range(ROUNDS)]
    chunk_base = [await bare_asyncio([text_events(CHUNKS)]) for _ in range(ROUNDS)]
    steps = [step_events(i) for i in range(STEPS)]
    step_runs: list[float] = []
    hooked_runs: list[float] = []
    for _ in range(ROUNDS):  # the two configurations alternate, so load drifts hit both
        step_runs.append(await through_kernel(steps))
        hooked_runs.append(await through_kernel(steps, product_hooks()))
    step_base = [await bare_asyncio(steps) for _ in range(ROUNDS)]

    tool_runs = [await one_tool_machine(STEPS) for _ in range(ROUNDS)]
    reused_runs = [await one_reused_tool_machine(STEPS) for _ in range(ROUNDS)]
    tool_base = [await one_bare_call(STEPS) for _ in range(ROUNDS)]
    idle_runs = [await one_idle_event(STEPS * 4) for _ in range(ROUNDS)]

    return [
        (
            "streamed chunk through the turn (us)",
            best(chunk_runs) / CHUNKS * 1e6,
            best(chunk_base) / CHUNKS * 1e6,
            2.0,
            "us",
        ),
        (
            f"step with {CALLS_PER_STEP} tool calls (ms)",
            best(step_runs) / STEPS * 1e3,
            best(step_base) / STEPS * 1e3,
            2.0,
            "ms",
        ),
        (
            "  the same with the product's hooks (ms)",
            best(hooked_runs) / STEPS * 1e3,
            best(step_base) / STEPS * 1e3,
            2.0,
            "ms",
        ),
        (
            "one new tool machine (ms)",
            best(tool_runs) / STEPS * 1e3,
            best(tool_base) / STEPS * 1e3,
            None,
            "",
        ),
        (
            "one reused tool machine (ms)",
            best(reused_runs) / STEPS * 1e3,
            best(tool_base) / STEPS * 1e3,
            None,
            "",
        ),
        (
            "one machine event doing nothing (ms)",
            best(idle_runs) / (STEPS * 4) * 1e3,
            0.0,
            None,
            "",
        ),
    ]


async def count_rows() -> list[tuple[str, float, float, float]]:
    """Per step: machine events, microsteps and Python calls (a run without tool steps, one
    text answer, is subtracted: what is left is the steps')."""
    steps = [step_events(i) for i in range(STEPS)]
    rows: list[tuple[str, float, float, float]] = []
    for name, hooks in (("no hooks", None), ("product hooks", product_hooks())):
        run, empty = await counted(steps, hooks), await counted([], hooks)
        calls = await python_calls(steps, hooks) - await python_calls([], hooks)
        rows.append(
            (
                name,
                (run.events - empty.events) / STEPS,
                (run.microsteps - empty.microsteps) / STEPS,
                calls / STEPS,
            )
        )
    return rows


async def main(engines: Sequence[EngineKind]) -> None:
    results: list[list[Row]] = []
    for kind in engines:
        with use_engine(kind):
            results.append(await measure())
    heads = "".join(f"{kind:>10}" for kind in engines)
    print(f"{'measure':<40}{heads} {'bare asyncio':>13} {'ratio':>7} {'target':>10}")
    for index, (name, first, base, target, unit) in enumerate(results[0]):
        figures = "".join(f"{rows[index][1]:>10.2f}" for rows in results)
        ratio = first / base if base else float("inf")
        goal = "-" if target is None else f"<= {target:g} {unit}"
        print(f"{name:<40}{figures} {base:>13.2f} {ratio:>6.1f}x {goal:>10}")
    print(
        f"(best of {ROUNDS} runs; {CHUNKS:,} chunks; {STEPS:,} steps; ratio of {engines[0]} to "
        "bare asyncio, target <= 3x)"
    )
    print(f"\n{'per step, 4 tool calls':<40}{'events':>10}{'microsteps':>12}{'Python calls':>14}")
    for name, events, micro, calls in await count_rows():
        print(f"{name:<40}{events:>10.1f}{micro:>12.1f}{calls:>14,.0f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--engine", choices=[*get_args(EngineKind), "both"], default="kernel")
    parser.add_argument("--quick", action="store_true", help="fewer steps and chunks, best of 2")
    arguments = parser.parse_args()
    chosen = arguments.engine
    if arguments.quick:
        CHUNKS, STEPS, ROUNDS = 5_000, 300, 2
    asyncio.run(main(get_args(EngineKind) if chosen == "both" else [chosen]))
