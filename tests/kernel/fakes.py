"""Fake ports for kernel tests: a scripted requester, a scripted tool runner, a fake clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tui_agent.kernel import Agent, KernelEvent, KernelOptions, ToolRunContext
from tui_agent.kernel.ports import PromptGate, ToolHooks
from tui_agent.vocab import (
    AbortSignal,
    EntryMeta,
    Finish,
    Finished,
    FinishReason,
    HistoryEntry,
    LLMError,
    LLMErrorKind,
    RequestSent,
    StreamEvent,
    StreamFailed,
    TextDelta,
    ThinkDelta,
    TokenUsage,
    ToolCall,
    ToolCallDelta,
    ToolResult,
    UsageReported,
    user_message,
)


async def settle(rounds: int = 30) -> None:
    """Let every ready task run (machines hop through a few tasks per event)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


# -- the clock ------------------------------------------------------------------------------------


class FakeClock:
    """`sleep` waits until `advance` moves time past its deadline (or not at all if `auto`)."""

    def __init__(self, *, auto: bool = False) -> None:
        self.auto = auto
        self.now = 0.0
        self.delays: list[float] = []
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    async def sleep(self, delay: float) -> None:
        self.delays.append(delay)
        if self.auto:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.now + delay, future))
        await future

    async def advance(self, seconds: float) -> None:
        await settle()  # let timers that are about to start register first
        self.now += seconds
        due = [f for deadline, f in self._sleepers if deadline <= self.now]
        self._sleepers = [(d, f) for d, f in self._sleepers if d > self.now]
        for future in due:
            if not future.done():
                future.set_result(None)
        await settle()


# -- the requester --------------------------------------------------------------------------------


@dataclass
class Gate:
    """A pause inside a scripted attempt: the stream waits until `open()`."""

    event: asyncio.Event = field(default_factory=asyncio.Event)

    def open(self) -> None:
        self.event.set()


Step = StreamEvent | Gate | Exception
Attempt = Sequence[Step]


def finish(reason: FinishReason = FinishReason.END_TURN, raw: str | None = "stop") -> Finished:
    return Finished(finish=Finish(reason=reason, raw=raw))


def text(*chunks: str, usage: TokenUsage | None = None) -> list[Step]:
    events: list[Step] = [RequestSent(), *(TextDelta(text=c) for c in chunks)]
    if usage is not None:
        events.append(UsageReported(usage=usage))
    return [*events, finish()]


def think_only(body: str = "hmm") -> list[Step]:
    return [RequestSent(), ThinkDelta(text=body), finish()]


def empty() -> list[Step]:
    return [RequestSent(), finish()]


def calls(
    *specs: tuple[str, str] | tuple[str, str, str],
    usage: TokenUsage | None = None,
    say: str = "",
    reason: FinishReason = FinishReason.TOOL_USE,
) -> list[Step]:
    """Tool calls `(id, name[, arguments])`, each streamed with its arguments split in two."""
    events: list[Step] = [RequestSent()]
    if say:
        events.append(TextDelta(text=say))
    for index, spec in enumerate(specs):
        call_id, name = spec[0], spec[1]
        args = spec[2] if len(spec) == 3 else "{}"  # type: ignore[misc]
        half = len(args) // 2
        events.append(ToolCallDelta(index=index, id=call_id, name=name, arguments=args[:half]))
        events.append(ToolCallDelta(index=index, arguments=args[half:]))
    if usage is not None:
        events.append(UsageReported(usage=usage))
    return [*events, finish(reason, "tool_calls")]


def fail(
    kind: LLMErrorKind = LLMErrorKind.STATUS,
    status: int | None = 500,
    *,
    message: str = "server error",
    retry_after_s: float | None = None,
) -> list[Step]:
    error = LLMError(kind=kind, message=message, status=status, retry_after_s=retry_after_s)
    return [RequestSent(), StreamFailed(error=error)]


class ScriptedRequester:
    """Plays one scripted attempt per `stream` call; records each call's history and signal."""

    def __init__(self, *attempts: Attempt, fallback: Attempt | None = None) -> None:
        self.attempts = list(attempts)
        self.fallback = fallback if fallback is not None else text("(script exhausted)")
        self.histories: list[tuple[HistoryEntry, ...]] = []
        self.signals: list[AbortSignal] = []
        self.closed = 0

    def stream(
        self, history: Sequence[HistoryEntry], signal: AbortSignal
    ) -> AsyncIterator[StreamEvent]:
        self.histories.append(tuple(history))
        self.signals.append(signal)
        index = len(self.histories) - 1
        script = self.attempts[index] if index < len(self.attempts) else self.fallback
        return self._play(script)

    async def _play(self, script: Attempt) -> AsyncIterator[StreamEvent]:
        try:
            for step in script:
                if isinstance(step, Gate):
                    await step.event.wait()
                elif isinstance(step, Exception):
                    raise step
                else:
                    yield step
        finally:
            self.closed += 1

    @property
    def calls(self) -> int:
        return len(self.histories)


# -- the tool runner ------------------------------------------------------------------------------

Behaviour = Callable[[ToolCall, ToolRunContext], Awaitable[ToolResult]]


def ok(output: str) -> Behaviour:
    async def run(call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        return ToolResult(output=output)

    return run


def boom(message: str) -> Behaviour:
    async def run(call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        raise RuntimeError(message)

    return run


def hang_until_aborted(on_abort: str = "raise") -> Behaviour:
    """Waits for the signal; then raises, or returns `on_abort` as partial output."""

    async def run(call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        await ctx.signal.wait()
        if on_abort == "raise":
            raise RuntimeError("cancelled")
        return ToolResult(output=on_abort)

    return run


def hang_forever() -> Behaviour:
    async def run(call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    return run


def detaching(
    ack: str, finished: Gate, output: str = "bg-result", *, failure: str = ""
) -> Behaviour:
    async def run(call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        ctx.detach(ack)
        await finished.event.wait()
        if failure:
            raise RuntimeError(failure)
        return ToolResult(output=output)

    return run


def gated(gate: Gate, output: str) -> Behaviour:
    async def run(call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        await gate.event.wait()
        return ToolResult(output=output)

    return run


class ScriptedRunner:
    """Runs each call by tool name; an unknown name is an error result (as the tools layer)."""

    def __init__(self, **behaviours: Behaviour) -> None:
        self.behaviours = behaviours
        self.batches: list[tuple[str, ...]] = []
        self.batch_signals: list[AbortSignal] = []
        self.runs: list[str] = []
        self.signals: dict[str, AbortSignal] = {}

    def begin_batch(self, calls: Sequence[ToolCall], signal: AbortSignal) -> None:
        self.batches.append(tuple(c.id for c in calls))
        self.batch_signals.append(signal)

    async def run(self, call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        self.runs.append(call.id)
        self.signals[call.id] = ctx.signal
        behaviour = self.behaviours.get(call.name)
        if behaviour is None:
            return ToolResult(output=f"unknown tool: {call.name}", is_error=True)
        return await behaviour(call, ctx)


# -- the rig --------------------------------------------------------------------------------------


def prompt(body: str, prompt_id: str | None = None) -> HistoryEntry:
    return HistoryEntry(
        message=user_message(body), meta=EntryMeta(source="input", prompt_id=prompt_id)
    )


def note(body: str, source: Any = "notify") -> HistoryEntry:
    return HistoryEntry(message=user_message(body), meta=EntryMeta(source=source))


def line(entry: HistoryEntry) -> str:
    message = entry.message
    body = message.text
    if message.tool_calls:
        body += "[" + ",".join(c.id for c in message.tool_calls) + "]"
    return f"{message.role}:{body}"


RIGS: list[Rig] = []  # every rig of the running test, checked for caught errors at teardown


class Rig:
    """An `Agent` on fake ports, with every emission recorded."""

    def __init__(
        self,
        requester: ScriptedRequester,
        runner: ScriptedRunner | None = None,
        *,
        clock: FakeClock | None = None,
        hooks: ToolHooks | None = None,
        gate: PromptGate | None = None,
        history: Sequence[HistoryEntry] = (),
        **options: Any,
    ) -> None:
        self.requester = requester
        self.runner = runner or ScriptedRunner()
        self.clock = clock or FakeClock(auto=True)
        self.events: list[KernelEvent] = []
        opts = KernelOptions(
            sleep=self.clock.sleep,
            random=lambda: 0.0,
            provider="test",
            model="test-model",
            **options,
        )
        self.agent = Agent(
            requester,
            self.runner,
            self.events.append,
            options=opts,
            tool_hooks=hooks,
            prompt_gate=gate,
            history=history,
        )

    async def start(self) -> Rig:
        RIGS.append(self)
        await self.agent.start()
        return self

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def lines(self) -> list[str]:
        return [line(e) for e in self.agent.history]

    async def run(self, *bodies: str) -> None:
        for i, body in enumerate(bodies):
            await self.agent.submit(prompt(body, f"p{i + 1}"))
        await self.agent.idle()
        await settle()


async def rig(*attempts: Attempt, runner: ScriptedRunner | None = None, **kw: Any) -> Rig:
    return await Rig(ScriptedRequester(*attempts), runner, **kw).start()
