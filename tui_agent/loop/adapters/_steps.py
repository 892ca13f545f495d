"""The step records of the event log, kept in step with the kernel (docs/loop-spec.md §7).

`StepRecords` owns the step that is open in the log: `step.begin` when an attempt goes on the
wire, content parts and tool calls when the step completes, a `tool.result` per call as it
completes, and `step.end` when the step has no calls, after its last result, as `error` for a
failed attempt, or `interrupted` when the turn was cancelled (its tools answered the abort, or
an aborted result is back-filled for every call still unresolved). It writes through the one
writer (`Journal`) and tells the policy when a step is finished.
"""

from __future__ import annotations

import uuid
from dataclasses import field

from tui_agent.context import (
    ContentPartDone,
    StepBegin,
    StepEnd,
    ToolCallStarted,
    ToolResultRecorded,
)
from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop import transcript
from tui_agent.loop.adapters.journal import Journal
from tui_agent.loop.adapters.listener import EngineListener, StepFacts
from tui_agent.vocab import Finish, FinishReason, HistoryEntry, Message, TokenUsage, ToolResult


@dataclass
class _OpenStep:
    uuid: str
    step: int
    pending: list[str] = field(default_factory=list)  # call ids without a logged result
    usage: TokenUsage | None = None
    finish: Finish | None = None
    completed: bool = False


class StepRecords:
    def __init__(self, journal: Journal, listener: EngineListener) -> None:
        self._journal = journal
        self._listener = listener
        self._open: _OpenStep | None = None

    def begin(self, turn_id: int, step: int) -> StepBegin:
        self._open = _OpenStep(uuid=uuid.uuid4().hex, step=step)
        record = StepBegin(uuid=self._open.uuid, turn_id=turn_id, step=step)
        self._journal.write(record)
        return record

    def usage(self, usage: TokenUsage) -> None:
        if self._open is not None:
            self._open.usage = usage

    def answered(
        self, step_number: int, message: Message, finish: Finish | None, usage: TokenUsage | None
    ) -> TokenUsage | None:
        """The step's answer is whole: its parts and calls are logged; returns its usage."""
        step = self._open or _OpenStep(uuid=uuid.uuid4().hex, step=step_number)
        self._open = step
        step.usage = usage or step.usage
        step.finish = finish
        step.completed = True
        for part in message.content:
            self._journal.write(ContentPartDone(step_uuid=step.uuid, part=part))
        for call in message.tool_calls:
            self._journal.write(ToolCallStarted(step_uuid=step.uuid, call=call))
            step.pending.append(call.id)
        return step.usage

    def result(self, record: ToolResultRecorded, finish_turn: int | None) -> None:
        """Log a call's result if its step waits for it; the step's last result ends it
        (unless `finish_turn` is None: a cancelled turn's step is sealed when the turn ends)."""
        step = self._open
        if step is None or record.call_id not in step.pending:
            return
        self._journal.write(record)
        step.pending.remove(record.call_id)
        if not step.pending and finish_turn is not None:
            self.finish(finish_turn, had_calls=True)

    def finish(self, turn_id: int, *, had_calls: bool) -> None:
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
        self._end(step, reason, finish.raw if finish else None)
        self._listener.step_finished(StepFacts(turn_id, step.step, step.usage, finish))

    def fail(self) -> None:
        """The attempt failed (or the turn ended before its answer was whole)."""
        if self._open is not None:
            self._end(self._open, FinishReason.ERROR, None)

    def fail_unanswered(self) -> None:
        if self._open is not None and not self._open.completed:
            self.fail()

    def seal_interrupted(self, produced: tuple[HistoryEntry, ...]) -> None:
        """Cancel: back-fill every unresolved call, keep a salvaged partial, end `interrupted`."""
        step = self._open
        if step is None:
            return
        if step.completed:
            texts = {e.message.tool_call_id: e for e in produced if e.message.role == "tool"}
            for call_id in list(step.pending):
                entry = texts.get(call_id)
                text = entry.message.text if entry else "aborted"
                result = ToolResult(output=text, is_error=True)
                self._journal.write(transcript.tool_result_record(call_id, result, "aborted"))
            step.pending.clear()
        else:
            for entry in produced:
                if entry.meta.source == "salvaged":
                    for part in entry.message.content:
                        self._journal.write(ContentPartDone(step_uuid=step.uuid, part=part))
        self._end(step, FinishReason.INTERRUPTED, None)

    def _end(self, step: _OpenStep, reason: FinishReason, raw: str | None) -> None:
        self._journal.write(
            StepEnd(
                uuid=step.uuid,
                finish_reason=reason,
                raw_finish_reason=raw,
                usage=step.usage,
                model=self._listener.serving_model(),
            )
        )
        self._open = None
