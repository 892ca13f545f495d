"""The kernel's engine against python-statemachine's stock engine, on generated inputs.

Hypothesis writes programs of inputs (prompts submitted, steered, cancelled, edited, moved;
notifications, reminders, pause and continue, aborts of the turn and of one tool, resets; the
model's answers: text, tool calls, retryable and fatal failures, empty answers; each tool's end:
a result, an error result, a raise, a detach and a background finish; the fake clock moving).
Each program runs twice, once on each engine, in a world where nothing happens by itself: the
model answers, tools end and time passes only when the program says so, and after every input
the loop runs until nothing is ready. After every input both runs must have the same
configuration (active states) of the agent, its turn and every tool machine, and must have
emitted the same kernel events.

The three tests weight the program towards one machine each: the agent (its inputs), the turn
(the model's answers, retries, steers mid-turn, max steps) and the tool (hooks that deny, raise
or rewrite; results, detaches, per-tool aborts).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.kernel.fakes import FakeClock, calls, empty, fail, note, prompt, settle, text
from tui_agent.kernel import (
    Agent,
    Deny,
    GateVerdict,
    KernelEvent,
    KernelOptions,
    Proceed,
    ToolHooks,
    ToolRunContext,
    Transitioned,
)
from tui_agent.kernel._statemachine_engine import EngineKind, use_engine
from tui_agent.vocab import (
    AbortSignal,
    EntryMeta,
    HistoryEntry,
    LLMErrorKind,
    StreamEvent,
    ToolCall,
    ToolResult,
    user_message,
)

SETTINGS = settings(
    max_examples=20,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
_INVOKE_ID = re.compile(r"(invoke\.[\w.]+?\.)[0-9a-f]{6,}")

# -- the world: a model, tools and a clock that move only when the program says ---------------


class Model:
    """Each `stream` plays the next answer the program gave, waiting for it if there is none."""

    def __init__(self) -> None:
        self.given = 0
        self.unheard: list[list[Any]] = []  # answers given that no stream has taken yet
        self.waiting: list[asyncio.Future[list[Any]]] = []

    def stream(
        self, history: Sequence[HistoryEntry], signal: AbortSignal
    ) -> AsyncIterator[StreamEvent]:
        future: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self.waiting.append(future)
        self._hand_out()
        return self._play(future)

    async def _play(self, future: asyncio.Future[list[Any]]) -> AsyncIterator[StreamEvent]:
        for event in await future:
            yield event

    def answer(self, kind: str, tools: Sequence[str]) -> None:
        self.given += 1
        n = self.given
        scripts: dict[str, list[Any]] = {
            "text": text(f"answer {n}"),
            "calls": calls(*((f"c{n}.{i}", name) for i, name in enumerate(tools)), say="on it"),
            "retryable": fail(LLMErrorKind.OVERLOADED, 529, retry_after_s=1.0),
            "fatal": fail(LLMErrorKind.AUTH, 401, message="bad key"),
            "empty": empty(),
        }
        self.unheard.append(scripts[kind])
        self._hand_out()

    def _hand_out(self) -> None:
        self.waiting = [f for f in self.waiting if not f.done()]  # a stream cancelled before
        while self.waiting and self.unheard:
            self.waiting.pop(0).set_result(self.unheard.pop(0))


@dataclass
class Run:
    """One tool run: it waits for the program's verdicts (or its abort signal)."""

    call: ToolCall
    ctx: ToolRunContext
    verdicts: asyncio.Queue[str] = field(default_factory=asyncio.Queue)
    detached: bool = False


class Tools:
    def __init__(self) -> None:
        self.runs: list[Run] = []

    def begin_batch(self, calls: Sequence[ToolCall], signal: AbortSignal) -> None:
        pass

    async def run(self, call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        run = Run(call, ctx)
        self.runs.append(run)
        try:
            while True:
                verdict = await _first(run.verdicts.get(), ctx.signal.wait())
                if verdict == "detach" and not run.detached:
                    run.detached = True
                    ctx.detach(f"{call.id} continues in the background")
                elif verdict in ("ok", "detach"):
                    return ToolResult(output=f"{call.id} done")
                elif verdict == "error":
                    return ToolResult(output=f"{call.id} failed", is_error=True)
                else:  # "raise", or the signal's reason
                    raise RuntimeError(f"{call.id}: {verdict}")
        finally:
            self.runs.remove(run)

    def end(self, index: int, verdict: str) -> None:
        if self.runs:
            self.runs[index % len(self.runs)].verdicts.put_nowait(verdict)


async def _first(*waits: Any) -> str:
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:  # also when the run itself is cancelled (its state was left)
        for task in tasks:
            task.cancel()
    return str(next(t for t in tasks if t in done).result())


class Hooks(ToolHooks):
    """`denied` is refused, `prepare_boom` and `finish_boom` raise, `rewritten` is rewritten."""

    async def prepare(self, call: ToolCall) -> Proceed | Deny:
        if call.name == "denied":
            return Deny(ToolResult(output="not allowed", is_error=True))
        if call.name == "prepare_boom":
            raise RuntimeError("prepare hook broke")
        return Proceed(call)

    async def finish(self, call: ToolCall, result: ToolResult) -> ToolResult:
        if call.name == "finish_boom":
            raise RuntimeError("finish hook broke")
        if call.name == "rewritten":
            return ToolResult(output=f"{result.output} (checked)", is_error=result.is_error)
        return result


class AtOnceHooks(Hooks):
    """The product's kind: no preparing, and results finished at once except `rewritten`
    (which goes through finishing); `finish_boom` raises at once."""

    prepares = False

    def finish_at_once(self, call: ToolCall, result: ToolResult) -> ToolResult | None:
        if call.name == "finish_boom":
            raise RuntimeError("finish hook broke at once")
        return None if call.name == "rewritten" else result


HOOKS: tuple[type[ToolHooks] | None, ...] = (None, Hooks, AtOnceHooks)


async def gate(entry: HistoryEntry) -> GateVerdict:
    return GateVerdict(block="blocked" in entry.message.text)


# -- programs ------------------------------------------------------------------------------------

TOOL_NAMES = ("work", "denied", "prepare_boom", "finish_boom", "rewritten", "unknown")
ANSWERS = ["text", "calls", "calls", "retryable", "fatal", "empty"]
answers = st.tuples(
    st.just("answer"),
    st.sampled_from(ANSWERS),
    st.lists(st.sampled_from(TOOL_NAMES), min_size=1, max_size=3),
)
tool_calls = st.tuples(
    st.just("answer"),
    st.sampled_from(["calls", "calls", "calls", "text"]),
    st.lists(st.sampled_from(TOOL_NAMES), min_size=1, max_size=3),
)
tool_ends = st.tuples(
    st.just("tool"), st.integers(0, 3), st.sampled_from(["ok", "error", "raise", "detach"])
)
submits = st.tuples(st.just("submit"), st.sampled_from(["hello", "blocked", "more"]))
QUEUE_OPS = ("steer", "cancel", "edit", "move")
queue_ops = st.tuples(st.sampled_from(QUEUE_OPS), st.integers(0, 3), st.integers(-2, 2))
OTHERS = ["notify", "remind", "pause", "resume", "abort", "abort_tool", "reset", "close", "tick"]


def one(*names: str) -> st.SearchStrategy[tuple[Any, ...]]:
    return st.tuples(st.sampled_from(names))


agent_programs = st.lists(
    st.one_of(
        submits, submits, queue_ops, queue_ops, one(*OTHERS), one(*OTHERS), answers, tool_ends
    ),
    min_size=3,
    max_size=25,
)
turn_programs = st.lists(
    st.one_of(answers, answers, answers, submits, queue_ops, one("tick", "abort", "notify")),
    min_size=3,
    max_size=25,
)
tool_programs = st.lists(
    st.one_of(tool_calls, tool_ends, tool_ends, tool_ends, one("abort_tool", "abort", "tick")),
    min_size=3,
    max_size=25,
)


REMINDER = EntryMeta(source="reminder", key="k")


@dataclass
class World:
    agent: Agent
    model: Model
    tools: Tools
    clock: FakeClock
    events: list[KernelEvent]
    prompts: int = 0


async def step(world: World, op: tuple[Any, ...]) -> None:
    agent, kind = world.agent, op[0]
    queued = [e.meta.prompt_id or "" for e in agent.queue]
    pick = queued[op[1] % len(queued)] if queued and kind in QUEUE_OPS else "none"
    if kind == "submit":
        world.prompts += 1
        await agent.submit(prompt(f"{op[1]} {world.prompts}", f"p{world.prompts}"))
    elif kind == "steer":
        await agent.steer([pick])
    elif kind == "cancel":
        await agent.cancel_queued(pick)
    elif kind == "edit":
        await agent.edit_queued(pick, user_message(f"edited {pick}"))
    elif kind == "move":
        await agent.move_queued(pick, op[2])
    elif kind == "notify":
        await agent.notify(note("ping"))
    elif kind == "remind":
        await agent.remind("k", note("mind", "reminder").model_copy(update={"meta": REMINDER}))
    elif kind == "pause":
        await agent.pause()
    elif kind == "resume":
        await agent.resume()
    elif kind == "abort":
        await agent.abort()
    elif kind == "abort_tool":
        running = sorted(call_id for call_id, (_, state) in agent.tools.items())
        if running:
            await agent.abort_tool(running[0], "user_cancelled")
    elif kind == "reset":
        await agent.reset(agent.history[:1])
    elif kind == "close":
        await agent.close()
    elif kind == "tick":
        await world.clock.advance(5.0)
    elif kind == "answer":
        world.model.answer(op[1], op[2])
    elif kind == "tool":
        world.tools.end(op[1], op[2])


def snapshot(world: World) -> tuple[Any, ...]:
    machine = world.agent._m
    turn = machine.turn
    return (
        sorted(s.id for s in machine.configuration),
        None if turn is None else sorted(s.id for s in turn.configuration),
        {cid: sorted(s.id for s in tool.configuration) for cid, tool in machine.tools.items()},
    )


def emitted(world: World) -> tuple[list[str], dict[str, list[str]]]:
    """The kernel events since the last input: in order, and each machine's `Transitioned` in
    order. How one machine's `Transitioned` interleaves with the work of tasks its transition
    started may differ: the stock engine runs `after` callbacks (the emission) through
    `asyncio.gather`, so tasks already ready run first; ours runs them at once."""
    events, world.events[:] = list(world.events), []
    moves: dict[str, list[str]] = {}
    others: list[str] = []
    for event in events:
        shown = _INVOKE_ID.sub(r"\1<id>", repr(event))
        if isinstance(event, Transitioned):
            moves.setdefault(f"{event.machine}:{event.machine_id}", []).append(shown)
        else:
            others.append(shown)
    return others, moves


async def play(
    program: Sequence[tuple[Any, ...]], engine: EngineKind, hooks: type[ToolHooks] | None
) -> list[Any]:
    """The program on one engine: after each input, the configuration and the emissions."""
    with use_engine(engine):
        model, tools, clock = Model(), Tools(), FakeClock()
        events: list[KernelEvent] = []
        options = KernelOptions(
            sleep=clock.sleep,
            random=lambda: 0.0,
            clock=lambda: 1_000.0,
            provider="test",
            model="test-model",
            max_steps=4,
        )
        agent = Agent(
            model,
            tools,
            events.append,
            options=options,
            tool_hooks=None if hooks is None else hooks(),
            prompt_gate=gate,
        )
        world = World(agent, model, tools, clock, events)
        await agent.start()
        trace: list[Any] = [("start", snapshot(world), emitted(world))]
        for op in program:
            if agent._m.is_terminated:
                break
            await step(world, op)
            await settle(40)
            trace.append((op, snapshot(world), emitted(world)))
        trace.append(("errors", [repr(e) for e in agent.errors]))
        await agent.close()
        await settle()
        return trace


def same_on_both_engines(program: Sequence[tuple[Any, ...]], hooks: type[ToolHooks] | None) -> None:
    ours = asyncio.run(play(program, "kernel", hooks))
    stock = asyncio.run(play(program, "stock", hooks))
    for mine, theirs in zip(ours, stock, strict=True):
        assert mine == theirs, f"the engines part ways at {mine[0]!r}"


@SETTINGS
@given(agent_programs, st.sampled_from(HOOKS))
def test_the_agent_machine_behaves_the_same_on_both_engines(
    program: list[tuple[Any, ...]], hooks: type[ToolHooks] | None
) -> None:
    same_on_both_engines(program, hooks)


@SETTINGS
@given(turn_programs)
def test_the_turn_machine_behaves_the_same_on_both_engines(
    program: list[tuple[Any, ...]],
) -> None:
    same_on_both_engines([("submit", "hello"), *program], hooks=None)


@SETTINGS
@given(tool_programs, st.sampled_from(HOOKS[1:]))
def test_the_tool_machine_behaves_the_same_on_both_engines(
    program: list[tuple[Any, ...]], hooks: type[ToolHooks]
) -> None:
    same_on_both_engines([("submit", "hello"), *program], hooks=hooks)
