"""The translation of kernel emissions: the one place a kernel fact becomes records and events.

`Translator` has one handler per kernel emission. Each handler writes the fact's records through
the one writer (`Journal`, step records by `StepRecords`), publishes the loop events observers
see (a logged fact's event built from its record by `loop.transcript`, the same function a
resumed session replays it with) and tells the turn policy the plain facts it needs
(`EngineListener`). It also keeps what a snapshot reads between emissions: each live call's
state and output tail, each machine's state, and the running turn's id. Turn starts and tool
results are published only once their records are durable (write-ahead, `Journal.durable`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from tui_agent.context import RetryRecorded, TurnBegin
from tui_agent.kernel import events as k
from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop import events as ev
from tui_agent.loop import transcript
from tui_agent.loop.adapters._steps import StepRecords
from tui_agent.loop.adapters.journal import Journal
from tui_agent.loop.adapters.listener import EngineListener, TurnFacts
from tui_agent.vocab import HistoryEntry, TextDelta, ThinkDelta, ToolResult, tool_status

if TYPE_CHECKING:
    from tui_agent.loop.snapshot import LiveTool


@dataclass
class _LiveTool:
    name: str
    state: str
    started_at: float
    tail: str = ""


class Translator:
    def __init__(
        self, journal: Journal, listener: EngineListener, clock: Callable[[], float]
    ) -> None:
        self._journal = journal
        self._listener = listener
        self._clock = clock
        self._steps = StepRecords(journal, listener)
        self._tools: dict[str, _LiveTool] = {}
        self._machine_states: dict[str, str] = {}
        self.turn_id: int | None = None  # the running kernel turn
        self._aborting = False  # the turn is being cancelled: its open step ends interrupted
        self._handlers: dict[type[k.KernelEvent], Callable[[Any], None]] = {
            k.Transitioned: self._on_transitioned,
            k.TurnOpened: self._on_turn_started,
            k.StepBegun: self._ignore,  # the step is logged when its attempt goes out
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

    def __call__(self, event: k.KernelEvent) -> None:
        # Every emission has a handler: a new kind without one fails loudly (the kernel
        # records the KeyError in `agent.errors`, which the tests assert is empty).
        self._handlers[type(event)](event)

    # -- what a snapshot reads ---------------------------------------------------------------
    def live_tools(self) -> tuple[LiveTool, ...]:
        from tui_agent.loop.snapshot import LiveTool  # a snapshot's, never taken by a one-shot

        return tuple(
            LiveTool(call_id, tool.name, tool.state, tool.started_at, tool.tail[-400:])
            for call_id, tool in self._tools.items()
        )

    def machine_states(self) -> dict[str, str]:
        return dict(self._machine_states)

    # -- handlers ----------------------------------------------------------------------------
    def _ignore(self, event: k.KernelEvent) -> None:
        pass

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
        self.turn_id = event.turn_id
        self._aborting = False
        prompt_ids = prompt_ids_of(event.entries)
        begin = TurnBegin(turn_id=event.turn_id, prompt_ids=prompt_ids)
        self._journal.write(begin)
        for entry in event.entries:
            self._journal.write(transcript.entry_record(entry))
        self._listener.turn_started(event.turn_id, event.entries)
        self._listener.publish(
            transcript.turn_started(begin, event.entries, prompt_ids=prompt_ids),
            after=self._journal.durable(),  # write-ahead: the prompts are on disk first
        )

    def _on_attempt_sent(self, event: k.AttemptSent) -> None:
        begin = self._steps.begin(event.turn_id, event.step)
        if event.attempt == 1:
            self._listener.publish(transcript.step_started(begin))

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
        self._steps.fail()
        self._listener.publish(ev.AttemptDiscarded(turn_id=event.turn_id, step=event.step))

    def _on_usage_recorded(self, event: k.UsageRecorded) -> None:
        self._steps.usage(event.usage)

    def _on_retrying(self, event: k.RetryScheduled) -> None:
        record = RetryRecorded(
            step=event.step,
            attempt=event.next_attempt,
            max_attempts=event.max_attempts,
            delay_s=event.delay_s,
            error_code=event.error.code,
            message=event.error.message,
            status=event.error.status,
        )
        self._journal.write(record)
        self._listener.publish(transcript.retrying(record, event.turn_id))

    def _on_step_completed(self, event: k.StepAnswered) -> None:
        message = event.entry.message
        usage = self._steps.answered(event.step, message, event.finish, event.entry.meta.usage)
        if usage is not None:
            self._listener.usage_recorded(usage)
        self._listener.publish(
            transcript.step_completed(
                event.turn_id,
                event.step,
                message.content,
                ts=self._clock(),
                finish_reason=event.finish.reason.value if event.finish else None,
                usage=usage,
            )
        )
        if not message.tool_calls:
            self._steps.finish(event.turn_id, had_calls=False)

    def _on_step_failed(self, event: k.StepFailed) -> None:
        self._steps.fail()

    def _on_tools_spawned(self, event: k.ToolsSpawned) -> None:
        now = self._clock()
        for call in event.calls:
            self._tools[call.id] = _LiveTool(call.name, "queued", now)
            self._listener.publish(transcript.tool_started(call, ts=now))

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
        record = transcript.tool_result_record(event.call_id, ToolResult(output=event.ack), None)
        self._steps.result(record, self._finishing_turn())

    def _on_tool_finished(self, event: k.ToolSettled) -> None:
        result = event.result
        status = tool_status(
            is_error=result.is_error, display=result.display, outcome=event.outcome
        )
        # The executor answers for a call it had to abort: older readers see that in `outcome`.
        outcome = "aborted" if status == "aborted" else event.outcome
        self._tools.pop(event.call_id, None)
        # A background call's result is not history: its record only shapes the event.
        record = transcript.tool_result_record(event.call_id, result, outcome)
        durable = None
        if not event.background:
            self._steps.result(record, self._finishing_turn())
            durable = self._journal.durable()  # write-ahead: the result is on disk first
        self._listener.publish(
            ev.ToolStateChanged(id=event.call_id, name=event.name, state=status), after=durable
        )
        self._listener.publish(
            transcript.tool_finished(record, event.name, background=event.background)
        )
        self._listener.tool_result(event.call_id, event.result, event.background)

    def _finishing_turn(self) -> int | None:
        """The turn whose step a last result ends; None while cancelling (the tools answered
        the abort: the step stays open until the turn ends and is sealed `interrupted`)."""
        return None if self._aborting else self.turn_id

    def _on_drained(self, event: k.InputsDrained) -> None:
        for entry in event.entries:
            self._journal.write(transcript.entry_record(entry))
        self._listener.drained(event.turn_id, event.entries)
        self._listener.publish(
            transcript.drained(
                event.turn_id,
                event.entries,
                ts=self._clock(),
                prompt_ids=prompt_ids_of(event.entries),
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
            self._steps.seal_interrupted(event.produced)
        else:
            self._steps.fail_unanswered()
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
        self.turn_id = None


def prompt_ids_of(entries: Sequence[HistoryEntry]) -> tuple[str, ...]:
    """The prompts behind `entries`, in order (a merged steer names several)."""
    return tuple(pid for entry in entries for pid in entry.meta.all_prompt_ids)
