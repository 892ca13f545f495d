"""The journal: what happens in the loop, written to the session's event log as records.

Implements `adapters.journal.Journal` over `context.EventLog`. Every write is queued and
returns at once (the engine calls it from synchronous kernel emissions); the log's writer task
keeps order, flushes per batch and fsyncs at step ends, turn ends and compactions, and whenever
the loop asks for `durable()` (write-ahead: before it reports a turn started or a tool result,
and before each request to the model).
"""

from __future__ import annotations

import asyncio

from tui_agent.context import (
    Compaction,
    ContentPartDone,
    Entry,
    ErrorReported,
    EventLog,
    Notification,
    Prompt,
    Reminder,
    RetryRecorded,
    Steer,
    StepBegin,
    StepEnd,
    ToolCallStarted,
    ToolResultRecorded,
    TurnBegin,
    TurnEnd,
    TurnOutcome,
    UsageAdded,
    UserCommand,
)
from tui_agent.loop.adapters.journal import ToolOutcome
from tui_agent.loop.events import Retrying, TurnResult
from tui_agent.vocab import (
    ContentPart,
    FinishReason,
    HistoryEntry,
    TokenUsage,
    ToolCall,
    ToolResult,
    ToolStatus,
)


class LogJournal:
    def __init__(self, log: EventLog) -> None:
        self.log = log

    def durable(self) -> asyncio.Future[None]:
        return self.log.barrier()

    def turn_begin(self, turn_id: int, prompt_ids: tuple[str, ...]) -> None:
        self.log.write(TurnBegin(turn_id=turn_id, prompt_ids=prompt_ids))

    def entry(self, entry: HistoryEntry) -> None:
        meta = entry.meta
        if meta.source == "input" and meta.in_turn:
            self.log.write(Steer(prompt_ids=meta.prompt_ids, entry=entry))
        elif meta.source == "input" and meta.prompt_id:
            self.log.write(
                Prompt(prompt_id=meta.prompt_id, message=entry.message, draft=meta.draft)
            )
        elif meta.source == "notify":
            self.log.write(Notification(entry=entry))
        elif meta.source == "reminder":
            self.log.write(Reminder(key=meta.key or "", entry=entry))
        else:
            self.log.write(Entry(entry=entry))

    def step_begin(self, uuid: str, turn_id: int, step: int) -> None:
        self.log.write(StepBegin(uuid=uuid, turn_id=turn_id, step=step))

    def content_part(self, step_uuid: str, part: ContentPart) -> None:
        self.log.write(ContentPartDone(step_uuid=step_uuid, part=part))

    def tool_call(self, step_uuid: str, call: ToolCall) -> None:
        self.log.write(ToolCallStarted(step_uuid=step_uuid, call=call))

    def tool_result(
        self, call_id: str, result: ToolResult, outcome: ToolOutcome | None = None
    ) -> None:
        self.log.write(
            ToolResultRecorded(
                call_id=call_id,
                output=result.output,
                is_error=result.is_error,
                note=result.note,
                display=result.display,
                outcome=outcome,
            )
        )

    def step_end(
        self,
        uuid: str,
        reason: FinishReason,
        raw: str | None = None,
        usage: TokenUsage | None = None,
    ) -> None:
        self.log.write(StepEnd(uuid=uuid, finish_reason=reason, raw_finish_reason=raw, usage=usage))

    def retrying(self, event: Retrying) -> None:
        # The record keeps the event's words (the turn is the one the log is in).
        self.log.write(RetryRecorded(**event.model_dump(exclude={"type", "ts", "turn_id"})))

    def usage_added(self, usage: TokenUsage) -> None:
        self.log.write(UsageAdded(usage=usage))

    def user_command(self, command: str, output: str, status: ToolStatus) -> None:
        self.log.write(UserCommand(command=command, output=output, status=status))

    def turn_end(self, turn_id: int, result: TurnResult) -> None:
        self.log.write(TurnEnd(turn_id=turn_id, result=TurnOutcome(**result.model_dump())))

    def compaction(
        self, summary: str, kept: tuple[HistoryEntry, ...], before: int, after: int
    ) -> None:
        self.log.write(
            Compaction(summary=summary, kept=kept, tokens_before=before, tokens_after=after)
        )

    def error(self, text: str) -> None:
        self.log.write(ErrorReported(text=text))
