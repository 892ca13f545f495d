"""Replaying a session's event log as the loop events that first drew it.

A resumed session must show what the person saw before: the same blocks (an edit with its diff,
a call they stopped, the "interrupted" and "turn failed" markers) and the same token counts.
`replay(records, context_window)` turns the log back into the loop events a live run published
(turn started, step completed, tool started and finished, drained, turn finished, compacted,
usage), so observers rebuild their state through the very code that built it live; it also
totals the usage the resumed loop carries on from. A `rewind` drops the events of the turns it
undoes; `files.restored` becomes the notice /undo and /rewind showed; a `!command` becomes the
call named `!` the app drew for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from tui_agent.context import (
    Compaction,
    ContentPartDone,
    Entry,
    FilesRestored,
    Notification,
    Prompt,
    Record,
    Reminder,
    RetryRecorded,
    Rewind,
    Steer,
    StepBegin,
    StepEnd,
    ToolCallStarted,
    ToolResultRecorded,
    TurnBegin,
    TurnEnd,
    UsageAdded,
    UserCommand,
)
from tui_agent.loop import events as ev
from tui_agent.vocab import (
    ContentPart,
    EntryMeta,
    FinishReason,
    HistoryEntry,
    Message,
    TokenUsage,
    ToolCall,
    ToolResult,
)

_PROMPT = EntryMeta(source="input")
_QUEUED_AS: dict[str, Literal["notify", "reminder", "async-tool", "steer"]] = {
    "input": "steer",
    "notify": "notify",
    "reminder": "reminder",
    "async-tool": "async-tool",
}


@dataclass(frozen=True)
class Replay:
    events: tuple[ev.LoopEvent, ...]
    usage: TokenUsage  # every step's usage, summed, as the status bar showed it
    context_tokens: int  # what the last step (or compaction) left in the context


@dataclass
class _Step:
    number: int
    content: list[ContentPart] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    completed: bool = False


@dataclass(frozen=True)
class _TurnMark:
    at: int  # index into the events where the turn began
    context_tokens: int


class _Replayer:
    def __init__(self, context_window: int) -> None:
        self.window = context_window
        self.events: list[ev.LoopEvent] = []
        self.usage = TokenUsage()
        self.context_tokens = 0
        self.turn_id = 0
        self.turn_ts = 0.0
        self.turns: list[_TurnMark] = []
        self.opening: list[HistoryEntry] | None = None  # a turn's first entries, not yet shown
        self.step: _Step | None = None
        self.calls: dict[str, ToolCall] = {}
        self.user_commands = 0

    def apply(self, record: Record) -> None:
        match record:
            case TurnBegin():
                self.turn_id = record.turn_id
                self.turn_ts = record.ts
                self.turns.append(_TurnMark(len(self.events), self.context_tokens))
                self.opening = []
            case Prompt():
                self._entry(HistoryEntry(message=record.message, meta=_PROMPT), ts=record.ts)
            case Notification() | Reminder() | Steer() | Entry():
                self._entry(record.entry, ts=record.ts)
            case StepBegin():
                self._open_turn()
                if self.step is None or self.step.number != record.step:
                    self.events.append(
                        ev.StepStarted(turn_id=record.turn_id, step=record.step, ts=record.ts)
                    )
                self.step = _Step(record.step)
            case ContentPartDone():
                if self.step is not None:
                    self.step.content.append(record.part)
            case ToolCallStarted():
                self._complete(record.ts)
                self.calls[record.call.id] = record.call
                self.events.append(
                    ev.ToolStarted(
                        id=record.call.id,
                        name=record.call.name,
                        arguments=record.call.arguments,
                        ts=record.ts,
                    )
                )
            case ToolResultRecorded():
                self._tool_result(record)
            case StepEnd():
                self._step_end(record)
            case TurnEnd():
                self._open_turn()
                self.step = None
                self.events.append(
                    ev.TurnFinished(
                        turn_id=record.turn_id,
                        text="",
                        result=ev.TurnResult(**record.result.model_dump()),
                        ts=record.ts,
                    )
                )
            case Compaction():
                self.context_tokens = record.tokens_after or 0
                self.events.append(
                    ev.Compacted(
                        summary=record.summary,
                        tokens_before=record.tokens_before or 0,
                        tokens_after=record.tokens_after or 0,
                        ts=record.ts,
                    )
                )
            case RetryRecorded():
                self.events.append(
                    ev.Retrying(
                        turn_id=self.turn_id,
                        step=record.step,
                        attempt=record.attempt,
                        max_attempts=record.max_attempts,
                        delay_s=record.delay_s,
                        error_code=record.error_code,
                        message=record.message,
                        status=record.status,
                        ts=record.ts,
                    )
                )
            case UserCommand():
                self._user_command(record)
            case UsageAdded():
                self.usage = self.usage + record.usage
                self._usage_changed(record.ts)
            case Rewind():
                self._rewind(record.turn, record.ts)
            case FilesRestored():
                self.events.append(
                    ev.Notice(level="info", text=restored_notice(record.paths), ts=record.ts)
                )
            case _:
                pass

    def _entry(self, entry: HistoryEntry, *, ts: float) -> None:
        if self.opening is not None:
            self.opening.append(entry)
            return
        # Drained into a running turn: it was queued first, then entered at a drain point.
        text = entry.message.text
        source = _QUEUED_AS.get(entry.meta.source)
        if source is not None:
            self.events.append(ev.NotificationQueued(source=source, text=text, ts=ts))
        self.events.append(ev.Drained(turn_id=self.turn_id, texts=(text,), ts=ts))

    def _open_turn(self) -> None:
        """The turn's opening entries are known once its first step (or its end) comes."""
        if self.opening is None:
            return
        opening, self.opening = self.opening, None
        self.events.append(
            ev.TurnStarted(
                turn_id=self.turn_id,
                prompt_ids=(),
                texts=tuple(entry.message.text for entry in opening),
                ts=self.turn_ts,
            )
        )

    def _complete(self, ts: float) -> None:
        """The step's content is whole: it shows as one completed answer (thinking, then text)."""
        step = self.step
        if step is None or step.completed:
            return
        step.completed = True
        message = Message(role="assistant", content=tuple(step.content))
        self.events.append(
            ev.StepCompleted(
                turn_id=self.turn_id,
                step=step.number,
                text=message.text,
                thinking=message.thinking,
                finish_reason=None,
                usage=None,
                ts=ts,
            )
        )

    def _tool_result(self, record: ToolResultRecorded) -> None:
        call = self.calls.get(record.call_id)
        if call is None:
            return
        text = ToolResult(output=record.output).text  # as the live event showed it
        # Logs older than `outcome` knew only the machine's word for a result: succeeded.
        outcome = record.outcome or "succeeded"
        self.events.append(
            ev.ToolFinished(
                id=call.id,
                name=call.name,
                outcome=outcome,
                output=text,
                is_error=record.is_error,
                display=record.display,
                ts=record.ts,
            )
        )

    def _user_command(self, record: UserCommand) -> None:
        """The row a `!command` drew: a call named `!`, as the app draws it."""
        self.user_commands += 1
        call_id = f"user-{self.user_commands}"
        arguments = json.dumps({"command": record.command})
        self.events.append(ev.ToolStarted(id=call_id, name="!", arguments=arguments, ts=record.ts))
        self.events.append(
            ev.ToolFinished(
                id=call_id,
                name="!",
                outcome="aborted" if record.status == "aborted" else "succeeded",
                output=record.output,
                is_error=record.status == "failed",
                ts=record.ts,
            )
        )

    def _step_end(self, record: StepEnd) -> None:
        step = self.step
        if step is None:
            return
        had_calls = step.completed  # a completed step with calls logs its calls first
        if record.finish_reason not in (FinishReason.ERROR, FinishReason.INTERRUPTED):
            self._complete(record.ts)
            counted = True
        else:
            # Text salvaged from a cancelled stream was on screen; a failed attempt's was not.
            if record.finish_reason is FinishReason.INTERRUPTED and step.content:
                self._complete(record.ts)
            counted = record.finish_reason is FinishReason.INTERRUPTED and had_calls
        if counted and record.usage is not None:
            # The loop reports a step's usage once its answer is complete.
            self.usage = self.usage + record.usage
            self.context_tokens = record.usage.total
            self._usage_changed(record.ts)

    def _usage_changed(self, ts: float) -> None:
        self.events.append(
            ev.UsageChanged(
                total=self.usage,
                context_tokens=self.context_tokens,
                context_window=self.window,
                ts=ts,
            )
        )

    def _rewind(self, turn: int, ts: float) -> None:
        if not 0 <= turn < len(self.turns):
            return
        mark = self.turns[turn]
        del self.events[mark.at :]
        self.opening = None
        self.step = None
        self.context_tokens = mark.context_tokens
        if self.usage.total:  # the tokens were spent all the same
            self._usage_changed(ts)


def restored_notice(paths: Sequence[str]) -> str:
    """What /undo and /rewind say (and a resumed session shows again)."""
    if not paths:
        return "no files needed restoring: they were already as before"
    return "restored " + ", ".join(sorted(paths))


def replay(records: Iterable[Record], *, context_window: int) -> Replay:
    replayer = _Replayer(context_window)
    for record in records:
        replayer.apply(record)
    replayer._open_turn()
    return Replay(tuple(replayer.events), replayer.usage, replayer.context_tokens)
