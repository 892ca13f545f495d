"""The engine adapter: owns the kernel's agent machine and translates what it emits.

Every kernel emission becomes (1) loop events for observers, (2) event-log records through the
journal, and (3) plain facts for the loop's turn policy (`EngineListener`, in `loop._policy`): a
step finished, a tool result arrived, a turn ended. The service never sees kernel types; this
module and its siblings are the only code that imports the kernel.

Step bookkeeping follows docs/loop-spec.md §7: `step.begin` when an attempt goes on the wire,
content parts and tool calls when the step completes, a `tool.result` per call as it completes, and
`step.end` when the step has no calls, after its last result, as `error` for a failed attempt,
or `interrupted` when the turn was cancelled (its tools answered the abort, or an aborted result
is back-filled for every call still unresolved). Turn starts and tool results are published only
once their records are durable (write-ahead, `Journal.durable`).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tui_agent.kernel import Agent, KernelOptions
from tui_agent.kernel import events as k
from tui_agent.kernel.ports import Deny, GateVerdict, Proceed, Requester, ToolRunner
from tui_agent.loop import events as ev
from tui_agent.loop.adapters.journal import Journal, ToolOutcome
from tui_agent.loop.snapshot import LiveTool, PendingNotification, QueuedPrompt
from tui_agent.vocab import (
    Finish,
    FinishReason,
    HistoryEntry,
    Message,
    TextDelta,
    ThinkDelta,
    TokenUsage,
    ToolCall,
    ToolResult,
    TurnError,
    tool_status,
)


@dataclass(frozen=True)
class StepFacts:
    turn_id: int
    step: int
    usage: TokenUsage | None
    finish: Finish | None


@dataclass(frozen=True)
class TurnFacts:
    turn_id: int
    outcome: str  # done | failed | aborted
    steps: int
    produced: tuple[HistoryEntry, ...]
    error: TurnError | None
    reason: str | None


class EngineListener(Protocol):
    def publish(self, event: ev.LoopEvent, after: asyncio.Future[None] | None = None) -> None:
        """Deliver `event` to observers in order; with `after`, not before that future is
        done (and every later event waits behind it)."""
        ...

    def turn_started(self, turn_id: int, entries: tuple[HistoryEntry, ...]) -> None: ...

    def drained(self, turn_id: int, entries: tuple[HistoryEntry, ...]) -> None:
        """Inputs (steers, notifications, reminders) entered the turn's history at a drain."""
        ...

    def step_finished(self, facts: StepFacts) -> None: ...

    def usage_recorded(self, usage: TokenUsage) -> None:
        """A step's usage, as soon as its stream finished (before any tool runs)."""
        ...

    def tool_result(self, call_id: str, result: ToolResult, background: bool) -> None: ...

    def turn_ended(self, facts: TurnFacts) -> None: ...

    async def finish_tool(self, call: ToolCall, result: ToolResult) -> ToolResult:
        """The after-tool hook: runs before the result reaches the turn (side channel)."""
        ...

    async def gate_prompt(self, message: Message) -> tuple[bool, Message]:
        """Before a queued prompt enters history: (block?, the message to commit)."""
        ...

    def prompt_dropped(self, prompt_id: str, reason: Literal["blocked", "failed"]) -> None: ...

    def internal_error(self, error: BaseException) -> None:
        """An error the kernel caught and kept (it never breaks a transition): tell the user."""
        ...


class _PromptGate:
    """Fills the kernel's PromptGate port with the listener's `gate_prompt`."""

    def __init__(self, listener: EngineListener) -> None:
        self._listener = listener

    async def __call__(self, entry: HistoryEntry) -> GateVerdict:
        block, message = await self._listener.gate_prompt(entry.message)
        return GateVerdict(block=block, message=None if message is entry.message else message)


class _AfterToolHook:
    """Fills the kernel's ToolHooks port: calls proceed as they are; results pass the listener."""

    def __init__(self, listener: EngineListener) -> None:
        self._listener = listener

    async def prepare(self, call: ToolCall) -> Proceed | Deny:
        return Proceed(call)

    async def finish(self, call: ToolCall, result: ToolResult) -> ToolResult:
        return await self._listener.finish_tool(call, result)


@dataclass
class _OpenStep:
    uuid: str
    step: int
    pending: list[str] = field(default_factory=list)  # call ids without a logged result
    usage: TokenUsage | None = None
    finish: Finish | None = None
    completed: bool = False


@dataclass
class _LiveTool:
    name: str
    state: str
    started_at: float
    tail: str = ""


class Engine:
    def __init__(
        self,
        *,
        requester: Requester,
        tool_runner: ToolRunner,
        journal: Journal,
        listener: EngineListener,
        options: KernelOptions,
        history: Sequence[HistoryEntry] = (),
        clock: Callable[[], float],
    ) -> None:
        self._journal = journal
        self._listener = listener
        self._clock = clock
        self._open: _OpenStep | None = None
        self._tools: dict[str, _LiveTool] = {}
        self._machine_states: dict[str, str] = {}
        self._turn_id: int | None = None
        self._step = 0
        self._aborting = False  # the turn is being cancelled: its open step ends interrupted
        # What the loop does with each kernel emission, by type.
        self._handlers: dict[type[k.KernelEvent], Callable[[Any], None]] = {
            k.Transitioned: self._on_transitioned,
            k.TurnOpened: self._on_turn_started,
            k.StepBegun: self._on_step_started,
            k.AttemptSent: self._on_attempt_sent,
            k.StreamPart: self._on_stream_part,
            k.AttemptVoided: self._on_attempt_discarded,
            k.UsageRecorded: self._on_usage_recorded,
            k.RetryScheduled: self._on_retrying,
            k.StepAnswered: self._on_step_completed,
            k.StepFailed: self._on_step_failed,
            k.ToolsSpawned: self._on_tools_spawned,
            k.ToolProgress: self._on_tool_progress,
            k.ToolOutput: self._on_tool_updated,
            k.ToolDetached: self._on_tool_detached,
            k.ToolSettled: self._on_tool_finished,
            k.InputsDrained: self._on_drained,
            k.SteerMerged: self._on_prompt_steered,
            k.PromptBlocked: self._on_prompt_blocked,
            k.PromptGateFailed: self._on_prompt_gate_failed,
            k.AbortBegun: self._on_turn_aborting,
            k.TurnEnded: self._on_turn_ended,
        }
        self.agent = Agent(
            requester,
            tool_runner,
            self._on_kernel_event,
            options=options,
            prompt_gate=_PromptGate(listener),
            tool_hooks=_AfterToolHook(listener),
            history=history,
            on_error=listener.internal_error,
        )

    # -- views -------------------------------------------------------------------------------
    @property
    def step(self) -> int:
        return self._step

    @property
    def active_turn_id(self) -> int | None:
        return self._turn_id

    def queue(self) -> tuple[QueuedPrompt, ...]:
        return tuple(
            QueuedPrompt(entry.meta.prompt_id or "", entry.message.text)
            for entry in self.agent.queue
        )

    def notifications(self) -> tuple[PendingNotification, ...]:
        pending = [
            PendingNotification(
                _notification_source(entry), entry.message.text, prompt_ids=entry.meta.prompt_ids
            )
            for entry in self.agent.notifications
        ]
        pending += [
            PendingNotification("reminder", entry.message.text, key)
            for key, entry in self.agent.reminders.items()
        ]
        return tuple(pending)

    def live_tools(self) -> tuple[LiveTool, ...]:
        return tuple(
            LiveTool(call_id, tool.name, tool.state, tool.started_at, tool.tail[-400:])
            for call_id, tool in self._tools.items()
        )

    def machine_states(self) -> dict[str, str]:
        return dict(self._machine_states)

    # -- translation -------------------------------------------------------------------------
    def _on_kernel_event(self, event: k.KernelEvent) -> None:
        # Every emission has a handler: a new kind without one fails loudly (the kernel
        # records the KeyError in `agent.errors`, which the tests assert is empty).
        self._handlers[type(event)](event)

    def _on_transitioned(self, event: k.Transitioned) -> None:
        self._machine_states[event.machine_id] = event.target
        self._listener.publish(
            ev.MachineTransition(
                machine=event.machine,
                machine_id=event.machine_id,
                event=event.event,
                source=event.source,
                target=event.target,
            )
        )

    def _on_turn_started(self, event: k.TurnOpened) -> None:
        self._turn_id = event.turn_id
        self._step = 0
        self._aborting = False
        prompt_ids = _prompt_ids(event.entries)
        self._journal.turn_begin(event.turn_id, prompt_ids)
        for entry in event.entries:
            self._journal.entry(entry)
        self._listener.turn_started(event.turn_id, event.entries)
        self._listener.publish(
            ev.TurnStarted(
                turn_id=event.turn_id,
                prompt_ids=prompt_ids,
                texts=tuple(entry.message.text for entry in event.entries),
            ),
            after=self._journal.durable(),  # write-ahead: the prompts are on disk first
        )

    def _on_step_started(self, event: k.StepBegun) -> None:
        self._step = event.step

    def _on_attempt_sent(self, event: k.AttemptSent) -> None:
        self._step = event.step
        self._open = _OpenStep(uuid=uuid.uuid4().hex, step=event.step)
        self._journal.step_begin(self._open.uuid, event.turn_id, event.step)
        if event.attempt == 1:
            self._listener.publish(ev.StepStarted(turn_id=event.turn_id, step=event.step))

    def _on_stream_part(self, event: k.StreamPart) -> None:
        part = event.event
        if isinstance(part, TextDelta) and part.text:
            self._listener.publish(
                ev.AssistantDelta(turn_id=event.turn_id, step=event.step, text=part.text)
            )
        elif isinstance(part, ThinkDelta) and part.text:
            self._listener.publish(
                ev.ThinkingDelta(turn_id=event.turn_id, step=event.step, text=part.text)
            )

    def _on_attempt_discarded(self, event: k.AttemptVoided) -> None:
        self._end_open_step(FinishReason.ERROR)
        self._listener.publish(ev.AttemptDiscarded(turn_id=event.turn_id, step=event.step))

    def _on_usage_recorded(self, event: k.UsageRecorded) -> None:
        if self._open is not None:
            self._open.usage = event.usage

    def _on_retrying(self, event: k.RetryScheduled) -> None:
        retrying = ev.Retrying(
            turn_id=event.turn_id,
            step=event.step,
            attempt=event.next_attempt,
            max_attempts=event.max_attempts,
            delay_s=event.delay_s,
            error_code=event.error.code,
            message=event.error.message,
            status=event.error.status,
        )
        self._journal.retrying(retrying)
        self._listener.publish(retrying)

    def _on_step_completed(self, event: k.StepAnswered) -> None:
        message = event.entry.message
        step = self._open or _OpenStep(uuid=uuid.uuid4().hex, step=event.step)
        self._open = step
        step.usage = event.entry.meta.usage or step.usage
        step.finish = event.finish
        step.completed = True
        for part in message.content:
            self._journal.content_part(step.uuid, part)
        for call in message.tool_calls:
            self._journal.tool_call(step.uuid, call)
            step.pending.append(call.id)
        if step.usage is not None:
            self._listener.usage_recorded(step.usage)
        self._listener.publish(
            ev.StepCompleted(
                turn_id=event.turn_id,
                step=event.step,
                text=message.text,
                thinking=message.thinking,
                finish_reason=event.finish.reason.value if event.finish else None,
                usage=step.usage,
            )
        )
        if not message.tool_calls:
            self._finish_step(event.turn_id, had_calls=False)

    def _on_step_failed(self, event: k.StepFailed) -> None:
        self._end_open_step(FinishReason.ERROR)

    def _on_tools_spawned(self, event: k.ToolsSpawned) -> None:
        now = self._clock()
        for call in event.calls:
            self._tools[call.id] = _LiveTool(call.name, "queued", now)
            self._listener.publish(
                ev.ToolStarted(id=call.id, name=call.name, arguments=call.arguments)
            )

    def _on_tool_progress(self, event: k.ToolProgress) -> None:
        """The runner's states (queued, awaiting approval, running) of a live call. A call's
        state has these writers only: spawned (queued), the runner, detached, finished."""
        tool = self._tools.get(event.call_id)
        if tool is None or tool.state in (event.status, "detached"):
            return
        tool.state = event.status
        self._listener.publish(
            ev.ToolStateChanged(id=event.call_id, name=tool.name, state=event.status)
        )

    def _on_tool_updated(self, event: k.ToolOutput) -> None:
        tool = self._tools.get(event.call_id)
        if tool is not None:
            tool.tail = (tool.tail + event.update.text)[-2000:]
        self._listener.publish(ev.ToolUpdated(id=event.call_id, text=event.update.text))

    def _on_tool_detached(self, event: k.ToolDetached) -> None:
        """The ack is the call's result in history; the work goes on in the background."""
        tool = self._tools.get(event.call_id)
        if tool is not None and tool.state != "detached":
            tool.state = "detached"
            self._listener.publish(
                ev.ToolStateChanged(id=event.call_id, name=tool.name, state="detached")
            )
        self._record_result(event.call_id, ToolResult(output=event.ack))

    def _on_tool_finished(self, event: k.ToolSettled) -> None:
        result = event.result
        status = tool_status(
            is_error=result.is_error, display=result.display, outcome=event.outcome
        )
        # The executor answers for a call it had to abort: older readers see that in `outcome`.
        outcome = "aborted" if status == "aborted" else event.outcome
        self._tools.pop(event.call_id, None)
        durable = None
        if not event.background:
            self._record_result(event.call_id, result, outcome)
            durable = self._journal.durable()  # write-ahead: the result is on disk first
        self._listener.publish(
            ev.ToolStateChanged(id=event.call_id, name=event.name, state=status), after=durable
        )
        self._listener.publish(
            ev.ToolFinished(
                id=event.call_id,
                name=event.name,
                outcome=outcome,
                output=result.text,
                is_error=result.is_error,
                display=result.display,
                background=event.background,
            )
        )
        self._listener.tool_result(event.call_id, event.result, event.background)

    def _on_drained(self, event: k.InputsDrained) -> None:
        for entry in event.entries:
            self._journal.entry(entry)
        self._listener.drained(event.turn_id, event.entries)
        self._listener.publish(
            ev.Drained(
                turn_id=event.turn_id,
                texts=tuple(e.message.text for e in event.entries),
                prompt_ids=_prompt_ids(event.entries),
            )
        )

    def _on_prompt_steered(self, event: k.SteerMerged) -> None:
        for prompt_id in event.prompt_ids:
            self._listener.publish(ev.PromptRemoved(prompt_id=prompt_id, reason="steered"))
        self._listener.publish(
            ev.PromptSteered(prompt_ids=event.prompt_ids, text=event.entry.message.text)
        )

    def _on_prompt_blocked(self, event: k.PromptBlocked) -> None:
        if event.prompt_id:
            self._listener.prompt_dropped(event.prompt_id, "blocked")
            self._listener.publish(ev.PromptRemoved(prompt_id=event.prompt_id, reason="blocked"))

    def _on_prompt_gate_failed(self, event: k.PromptGateFailed) -> None:
        if event.prompt_id:
            self._listener.prompt_dropped(event.prompt_id, "failed")
            self._listener.publish(ev.PromptRemoved(prompt_id=event.prompt_id, reason="failed"))
        self._listener.publish(ev.Notice(level="error", text=f"Prompt gate failed: {event.error}"))

    def _on_turn_aborting(self, event: k.AbortBegun) -> None:
        self._aborting = True
        self._listener.publish(ev.TurnAborting(turn_id=event.turn_id, reason=event.reason))

    def _on_turn_ended(self, event: k.TurnEnded) -> None:
        if event.outcome == "aborted":
            self._seal_interrupted(event.produced)
        elif self._open is not None and not self._open.completed:
            self._end_open_step(FinishReason.ERROR)
        for call_id, tool in list(self._tools.items()):
            if tool.state != "detached":
                del self._tools[call_id]
        self._listener.turn_ended(
            TurnFacts(
                turn_id=event.turn_id,
                outcome=event.outcome,
                steps=event.steps,
                produced=event.produced,
                error=event.error,
                reason=event.reason,
            )
        )
        self._turn_id = None

    # -- step records ------------------------------------------------------------------------
    def _record_result(
        self, call_id: str, result: ToolResult, outcome: ToolOutcome | None = None
    ) -> None:
        step = self._open
        if step is None or call_id not in step.pending:
            return
        self._journal.tool_result(call_id, result, outcome)
        step.pending.remove(call_id)
        if not step.pending and self._turn_id is not None and not self._aborting:
            # Cancelled: the tools answered the abort, the step stays open until the turn
            # ends and is sealed `interrupted` there.
            self._finish_step(self._turn_id, had_calls=True)

    def _finish_step(self, turn_id: int, *, had_calls: bool) -> None:
        step = self._open
        if step is None:
            return
        finish = step.finish
        reason = (
            FinishReason.TOOL_USE
            if had_calls
            else (finish.reason if finish else FinishReason.END_TURN)
        )
        if not had_calls and reason is FinishReason.TOOL_USE:
            reason = FinishReason.OTHER
        self._journal.step_end(step.uuid, reason, finish.raw if finish else None, step.usage)
        self._open = None
        self._listener.step_finished(StepFacts(turn_id, step.step, step.usage, finish))

    def _end_open_step(self, reason: FinishReason) -> None:
        if self._open is not None:
            self._journal.step_end(self._open.uuid, reason, None, self._open.usage)
            self._open = None

    def _seal_interrupted(self, produced: tuple[HistoryEntry, ...]) -> None:
        """Cancel: back-fill every unresolved call, keep a salvaged partial, end `interrupted`."""
        step = self._open
        if step is None:
            return
        if step.completed:
            texts = {e.message.tool_call_id: e for e in produced if e.message.role == "tool"}
            for call_id in list(step.pending):
                entry = texts.get(call_id)
                self._journal.tool_result(
                    call_id,
                    ToolResult(output=entry.message.text if entry else "aborted", is_error=True),
                    "aborted",
                )
            step.pending.clear()
        else:
            for entry in produced:
                if entry.meta.source == "salvaged":
                    for part in entry.message.content:
                        self._journal.content_part(step.uuid, part)
        self._journal.step_end(step.uuid, FinishReason.INTERRUPTED, None, step.usage)
        self._open = None


def _prompt_ids(entries: Sequence[HistoryEntry]) -> tuple[str, ...]:
    """The prompts behind `entries`, in order (a merged steer names several)."""
    return tuple(pid for entry in entries for pid in entry.meta.all_prompt_ids)


def _notification_source(entry: HistoryEntry) -> str:
    if entry.meta.source == "async-tool":
        return "async-tool"
    if entry.meta.in_turn:
        return "steer"
    return "notify"


__all__ = ["Engine", "EngineListener", "KernelOptions", "StepFacts", "TurnFacts"]
