# python-statemachine types `State.to` without the targetless `None` it accepts at run time,
# and nested compound classes as factories; transition tables would need an ignore per line.
# mypy: disable-error-code="arg-type"
"""The turn machine: the steps of one turn, with retries, tools, drain points and abort.

The seed's rules: docs/loop-spec.md §3.

    gating -> streaming(requesting, retrying) -> acting(running, aborting) -> draining -> gating
    acting -> streaming at once when the tools settled with nothing to drain, not paused and
    steps left (draining and gating would only count the step, in three microsteps)
    final: done | failed | aborted, delivered as a value (the machine itself, via `ended`)

Whether to go on is decided by the tool calls of the finished message, never by the finish
reason. The stream of one attempt is consumed inside the `requesting` invoke: deltas go through
the accumulator and straight out as `StreamPart`s (a machine event per chunk would cost ~80 µs
each for nothing the chart decides on); the invoke returns one `_Attempt` value that the chart
routes: calls -> acting, text -> done (or draining when a steer waits), retryable failure
(empty responses included) -> retrying, anything else -> failed. A generation token drops a
stale attempt's result.

The owner (the agent) is reached through `TurnHost`: it spawns the tool machines and, at each
drain point, hands over the queued notifications and reminders, which the turn then takes as
`turn.notify`. Tool outcomes arrive as `tool.settled` / `tool.detached` and enter history in
call order whatever the completion order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from itertools import chain, islice
from typing import Any, ClassVar, Protocol, overload

from statemachine import Event, State

from tui_agent.kernel.accumulator import MessageAccumulator, empty_response_error
from tui_agent.kernel.chart import Emit, KernelChart
from tui_agent.kernel.events import (
    AttemptSent,
    AttemptVoided,
    InputsDrained,
    Machine,
    RetryScheduled,
    StepAnswered,
    StepBegun,
    StepFailed,
    StreamPart,
    ToolsSpawned,
    TurnOutcome,
    UsageRecorded,
)
from tui_agent.kernel.ids import ToolCallIds
from tui_agent.kernel.options import KernelOptions
from tui_agent.kernel.ports import Requester
from tui_agent.kernel.retry import attempt_limit, final_error, retry_delay_s, should_retry
from tui_agent.kernel.tool import ABORTED_TEXT
from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import (
    AbortSignal,
    EntryMeta,
    Finish,
    Finished,
    HistoryEntry,
    LLMError,
    LLMErrorKind,
    Message,
    RequestSent,
    StreamFailed,
    TextDelta,
    TextPart,
    ToolCall,
    ToolResult,
    TurnError,
    error_result,
    max_steps_exceeded,
)


class TurnHost(Protocol):
    """What a turn needs from its owner."""

    def spawn_tools(self, calls: tuple[ToolCall, ...]) -> None: ...

    def drain(self) -> tuple[HistoryEntry, ...]: ...

    def steer_waiting(self) -> bool:
        """A steer waits for the next drain point (it arrived while this step ran)."""
        ...

    def has_inputs(self) -> bool:
        """`drain` would hand over something (notifications or reminders)."""
        ...


@dataclass(frozen=True)
class _Attempt:
    """How one attempt ended: an assistant entry, or an error (empty responses included)."""

    gen: int
    entry: HistoryEntry | None
    finish: Finish | None
    error: LLMError | None


def tool_entry(call_id: str, result: ToolResult) -> HistoryEntry:
    """The tool message that answers `call_id`."""
    content = (TextPart(text=result.output),) if isinstance(result.output, str) else result.output
    message = Message(role="tool", content=content, tool_call_id=call_id, is_error=result.is_error)
    return HistoryEntry(message=message, meta=EntryMeta(source="tool", note=result.note))


class HistorySoFar(Sequence[HistoryEntry]):
    """The history one attempt sees: the turn's opening history, then what the turn had
    produced when the attempt began. `produced` only ever grows, so this is a fixed snapshot
    without a copy (copying it for every attempt made a long turn quadratic)."""

    __slots__ = ("_base", "_len", "_produced")

    def __init__(self, base: tuple[HistoryEntry, ...], produced: list[HistoryEntry]) -> None:
        self._base = base
        self._produced = produced
        self._len = len(base) + len(produced)

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> HistoryEntry: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[HistoryEntry, ...]: ...

    def __getitem__(self, index: int | slice) -> HistoryEntry | tuple[HistoryEntry, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(self._len)))
        position = index + self._len if index < 0 else index
        if not 0 <= position < self._len:
            raise IndexError(index)
        base = len(self._base)
        return self._base[position] if position < base else self._produced[position - base]

    def __iter__(self) -> Iterator[HistoryEntry]:
        return chain(self._base, islice(self._produced, self._len - len(self._base)))


def _history_call_ids(history: Sequence[HistoryEntry]) -> list[str]:
    ids: list[str] = []
    for entry in history:
        ids.extend(call.id for call in entry.message.tool_calls)
        if entry.message.tool_call_id is not None and entry.message.role == "tool":
            ids.append(entry.message.tool_call_id)
    # A call and its result name the same id once: count each id once.
    return list(dict.fromkeys(ids))


class TurnMachine(KernelChart):
    machine_kind: ClassVar[Machine] = "turn"

    class live(State.Compound):
        gating = State(initial=True)

        class streaming(State.Compound):
            requesting = State(initial=True)
            retrying = State()

        class acting(State.Compound):
            running = State(initial=True)
            aborting = State()

        draining = State()

    done = State(final=True)
    failed = State(final=True)
    aborted = State(final=True)

    # Eventless (always) transitions, on atomic states only so the diagram draws them.
    live.gating.to(live.streaming, on="begin_step")
    live.acting.running.to(
        live.streaming, cond="settled_straight_on", on=["collect", "next_step", "begin_step"]
    )
    live.acting.running.to(live.draining, cond="all_settled", on="collect")
    live.acting.aborting.to(aborted, cond="all_settled", on="collect")

    done_invoke_requesting = (
        live.streaming.requesting.to(None, cond="stale")
        | live.streaming.requesting.to(live.acting, cond="has_calls", on="take_step")
        | live.streaming.requesting.to(live.draining, cond="answered_steer_waits", on="take_step")
        | live.streaming.requesting.to(done, cond="answered", on="take_step")
        | live.streaming.requesting.to(
            live.streaming.retrying, cond="can_retry", on="schedule_retry"
        )
        | live.streaming.requesting.to(failed, on="take_failure")
    )
    done_invoke_retrying = live.streaming.retrying.to(live.streaming.requesting)
    done_invoke_aborting = live.acting.aborting.to(aborted, on="collect_aborted")

    turn_abort = Event(
        live.gating.to(aborted, on="note_abort")
        | live.streaming.to(aborted, on="salvage")
        | live.acting.running.to(aborted, cond="forced", on="collect_aborted")
        | live.acting.running.to(live.acting.aborting, on="note_abort")
        | live.acting.aborting.to(aborted, on="collect_aborted")
        | live.draining.to(aborted, on="note_abort"),
        id="turn.abort",
        name="turn.abort",
    )
    turn_notify = Event(
        live.draining.to(done, cond="is_paused", on="take_drained")
        | live.draining.to(failed, cond="out_of_steps", on="fail_max_steps")
        | live.draining.to(live.gating, on="next_step"),
        id="turn.notify",
        name="turn.notify",
    )
    tool_settled = Event(
        live.acting.to(None, on="record_outcomes"), id="tool.settled", name="tool.settled"
    )
    tool_detached = Event(
        live.acting.to(None, on="record_detach"), id="tool.detached", name="tool.detached"
    )
    turn_pause = Event(live.to(None, on="set_paused"), id="turn.pause", name="turn.pause")
    turn_continue = Event(
        live.to(None, on="clear_paused"), id="turn.continue", name="turn.continue"
    )
    error_execution = live.to(None, on="record_error")

    def __init__(
        self,
        turn_id: int,
        history: Sequence[HistoryEntry],
        requester: Requester,
        host: TurnHost,
        signal: AbortSignal,
        options: KernelOptions,
        emit: Emit,
        errors: list[BaseException],
        *,
        paused: bool = False,
    ) -> None:
        self.turn_id = turn_id
        self.produced: list[HistoryEntry] = []
        self.step = 0
        self.attempt = 1
        self.paused = paused
        self.outcome: TurnOutcome | None = None
        self.error: TurnError | None = None
        self.abort_reason: str | None = None
        self._history = tuple(history)
        self._requester = requester
        self._host = host
        self._signal = signal
        self._options = options
        self._ids = ToolCallIds(_history_call_ids(history))
        self._budget = 1  # steps since the last injected input (`steps` in docs/loop-spec.md §3)
        self._gen = 0
        self._acc: MessageAccumulator | None = None
        self._llm_signal: AbortSignal | None = None
        self._delay_s = 0.0
        self._waited_s = 0.0  # the step's waits between attempts so far (the retry budget)
        self._pending: tuple[ToolCall, ...] = ()
        self._outcomes: dict[str, ToolResult] = {}
        self.ended: asyncio.Future[TurnMachine] = asyncio.get_running_loop().create_future()
        super().__init__(emit, f"turn-{turn_id}", errors)

    # -- invokes ---------------------------------------------------------------------------------

    def on_enter_requesting(self) -> None:
        self._gen += 1

    async def on_invoke_requesting(self) -> _Attempt:
        """Consume one attempt's stream; always returns a value, never raises."""
        gen = self._gen
        acc = self._acc = MessageAccumulator(self._ids)
        self._llm_signal = AbortSignal(self._signal)
        emit, turn_id, step = self._emit, self.turn_id, self.step
        stream = None
        try:
            stream = self._requester.stream(
                HistorySoFar(self._history, self.produced), self._llm_signal
            )
            async for event in stream:
                if type(event) is TextDelta:  # the common case first, without the dispatch
                    acc.add_text(event.text)
                    emit(StreamPart(turn_id, step, event))
                elif isinstance(event, RequestSent):
                    if acc.has_output or acc.usage is not None:
                        # A transport-level retry inside the requester: void what we have.
                        emit(AttemptVoided(turn_id, step))
                        self._ids.rollback()
                        acc = self._acc = MessageAccumulator(self._ids)
                    emit(AttemptSent(turn_id, step, self.attempt))
                elif isinstance(event, Finished):
                    acc.finish = event.finish
                    break
                elif isinstance(event, StreamFailed):
                    return _Attempt(gen, None, None, event.error)
                else:
                    emit(StreamPart(turn_id, step, acc.feed(event)))
        except Exception as error:  # a requester bug is a failed attempt, never an escape
            return _Attempt(gen, None, None, _unexpected(error))
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
        message = acc.message()
        options = self._options
        failure = empty_response_error(message, acc.finish, options.provider, options.model)
        if acc.usage is not None:
            emit(UsageRecorded(turn_id, step, acc.usage))
        if failure is not None:
            return _Attempt(gen, None, acc.finish, failure)
        return _Attempt(gen, acc.entry(options.model or None), acc.finish, None)

    async def on_invoke_retrying(self) -> None:
        await self._options.sleep(self._delay_s)

    async def on_invoke_aborting(self) -> None:
        await self._options.sleep(self._options.abort_grace_s)

    # -- guards ----------------------------------------------------------------------------------

    def stale(self, data: _Attempt) -> bool:
        return data.gen != self._gen

    def has_calls(self, data: _Attempt) -> bool:
        return data.entry is not None and bool(data.entry.message.tool_calls)

    def answered(self, data: _Attempt) -> bool:
        return data.entry is not None

    def answered_steer_waits(self, data: _Attempt) -> bool:
        """A text answer ends the turn, unless a steer came in meanwhile: the user is owed a
        step that sees it, so the turn drains and goes on."""
        return data.entry is not None and self._host.steer_waiting()

    def can_retry(self, data: _Attempt) -> bool:
        error = data.error
        return error is not None and should_retry(
            error, self.attempt, self._waited_s, self._options.retry_policy
        )

    def forced(self, force: bool = False) -> bool:
        return force

    def all_settled(self) -> bool:
        outcomes = self._outcomes
        return all(call.id in outcomes for call in self._pending)

    def settled_straight_on(self) -> bool:
        """The tools settled and the drain point has nothing to do but count the step."""
        settled, paused = self.all_settled(), self.paused
        return settled and not paused and not self.out_of_steps() and not self._host.has_inputs()

    def is_paused(self) -> bool:
        return self.paused

    def out_of_steps(self, entries: tuple[HistoryEntry, ...] = ()) -> bool:
        limit = self._options.max_steps
        return not entries and limit > 0 and self._budget >= limit

    # -- actions: streaming ----------------------------------------------------------------------

    def begin_step(self) -> None:
        self.step += 1
        self.attempt = 1
        self._waited_s = 0.0
        self._emit(StepBegun(self.turn_id, self.step))

    def on_enter_retrying(self) -> None:
        self.attempt += 1

    def _discard_attempt(self) -> None:
        self._ids.rollback()
        if self._acc is not None and self._acc.has_output:
            self._emit(AttemptVoided(self.turn_id, self.step))
        self._acc = None

    def take_step(self, data: _Attempt) -> None:
        entry = data.entry
        assert entry is not None  # guarded by has_calls / answered
        self._ids.commit()
        self._acc = None
        self.produced.append(entry)
        self._pending = entry.message.tool_calls
        self._outcomes = {}
        self._emit(StepAnswered(self.turn_id, self.step, entry, data.finish))

    def schedule_retry(self, data: _Attempt) -> None:
        error = data.error
        assert error is not None  # guarded by can_retry
        self._discard_attempt()
        options = self._options
        self._delay_s = retry_delay_s(
            error, self.attempt, self._waited_s, options.retry_policy, options.random
        )
        self._waited_s += self._delay_s
        limit = attempt_limit(error, options.retry_policy)
        self._emit(
            RetryScheduled(
                self.turn_id, self.step, self.attempt, self.attempt + 1, limit, self._delay_s, error
            )
        )

    def take_failure(self, data: _Attempt) -> None:
        self._discard_attempt()
        error = data.error
        if error is not None:
            options = self._options
            error = final_error(error, self._waited_s, options.retry_policy, options.clock())
        self.error = error
        if error is not None:
            self._emit(StepFailed(self.turn_id, self.step, error))

    def salvage(self, reason: str = "aborted") -> None:
        """Abort while streaming keeps the partial text (never the calls)."""
        self.note_abort(reason)
        if self._llm_signal is not None:
            self._llm_signal.abort(reason)
        acc = self._acc
        self._ids.rollback()
        self._acc = None
        if acc is not None:
            entry = acc.salvage(self._options.model or None)
            if entry is not None:
                self.produced.append(entry)

    def note_abort(self, reason: str = "aborted") -> None:
        if self.abort_reason is None:
            self.abort_reason = reason

    # -- actions: tools --------------------------------------------------------------------------

    def on_enter_acting(self) -> None:
        self._emit(ToolsSpawned(self.turn_id, self.step, self._pending))
        self._host.spawn_tools(self._pending)

    def record_outcomes(self, results: tuple[tuple[str, ToolResult], ...]) -> None:
        """The outcomes of the calls that settled together (as `(call_id, result)`)."""
        pending = {call.id for call in self._pending}
        for call_id, result in results:
            if call_id in pending:
                self._outcomes[call_id] = result

    def record_detach(self, call_id: str, ack: str, name: str = "") -> None:
        if call_id in self._outcomes:
            return
        if any(call.id == call_id for call in self._pending):
            self._outcomes[call_id] = ToolResult(output=ack or f"async running: {name}")

    def collect(self) -> None:
        """Tool messages in call order, whatever order the outcomes arrived in."""
        outcomes = self._outcomes
        aborted = error_result(ABORTED_TEXT)
        self.produced.extend(
            tool_entry(call.id, outcomes.get(call.id, aborted)) for call in self._pending
        )
        self._pending = ()
        self._outcomes = {}

    def collect_aborted(self, reason: str = "aborted") -> None:
        self.note_abort(reason)
        self.collect()

    # -- actions: drain points -------------------------------------------------------------------

    async def on_enter_draining(self) -> None:
        await self.raise_("turn.notify", entries=self._host.drain())

    def take_drained(self, entries: tuple[HistoryEntry, ...] = ()) -> None:
        self.produced.extend(entries)
        if entries:
            self._emit(InputsDrained(self.turn_id, self.step, entries))

    def next_step(self, entries: tuple[HistoryEntry, ...] = ()) -> None:
        self.take_drained(entries)
        self._budget = 1 if entries else self._budget + 1

    def fail_max_steps(self) -> None:
        self.error = max_steps_exceeded(self._options.max_steps)

    def set_paused(self) -> None:
        self.paused = True

    def clear_paused(self) -> None:
        self.paused = False

    # -- the outcome -----------------------------------------------------------------------------

    def after_transition(self, event: Any, source: Any, target: Any) -> None:
        super().after_transition(event, source, target)
        if target is not None and target.final:
            self.outcome = target.id
            if not self.ended.done():
                self.ended.set_result(self)


def _unexpected(error: Exception) -> LLMError:
    return LLMError(kind=LLMErrorKind.UNKNOWN, message=f"{type(error).__name__}: {error}")
