"""Replaying a session's event log as the loop events that first drew it.

The walk over the records lives here; each loop event is built by the same function the live
loop built it with (`loop.transcript`, from the same record), so this module pairs records
(a call with its result, a turn with its opening entries) and never copies a field itself.

A resumed session must show what the person saw before: the same blocks (an edit with its diff,
a call they stopped, the "interrupted" and "turn failed" markers) and the same token counts.
`replay(records, context_window)` turns the log back into the loop events a live run published
(turn started, step completed, tool started and finished, drained, turn finished, compacted,
usage), so observers rebuild their state through the very code that built it live; it also
totals the usage the resumed loop carries on from. A `rewind` drops the events of the turns it
undoes, a `branch.switch` puts back those of the branch it moves to (`Branches` keeps each turn's
events); `files.restored` becomes the notice /undo and /rewind showed; a `!command` becomes the
call named `!` the app drew for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from typing import Literal

from tui_agent.context import (
    Branches,
    BranchSwitch,
    Compaction,
    ContentPartDone,
    Entry,
    Notification,
    Prompt,
    Record,
    Reminder,
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
from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop import events as ev
from tui_agent.loop import transcript
from tui_agent.vocab import ContentPart, EntryMeta, FinishReason, HistoryEntry, TokenUsage, ToolCall

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
class _Mark:
    events: list[ev.LoopEvent]  # only ever appended to, or replaced: its first `at` stay
    at: int
    context_tokens: int


class _Replayer:
    def __init__(self, context_window: int) -> None:
        self.window = context_window
        self.events: list[ev.LoopEvent] = []
        self.usage = TokenUsage()
        self.context_tokens = 0
        self.turn_id = 0
        self.begin = TurnBegin(turn_id=0, ts=0.0)  # the turn whose records come now
        self.branches: Branches[_Mark] = Branches()
        self.opening: list[HistoryEntry] | None = None  # a turn's first entries, not yet shown
        self.step: _Step | None = None
        self.calls: dict[str, ToolCall] = {}
        self.user_commands = 0

    def apply(self, record: Record) -> None:
        match record:
            case TurnBegin():
                self.turn_id = record.turn_id
                self.begin = record
                self.branches.begin(self._here())
                self.opening = []
            case Prompt():
                meta = (
                    _PROMPT.model_copy(update={"model": record.model}) if record.model else _PROMPT
                )
                self._entry(HistoryEntry(message=record.message, meta=meta), ts=record.ts)
            case Notification() | Reminder() | Steer() | Entry():
                self._entry(record.entry, ts=record.ts)
            case StepBegin():
                self._open_turn()
                if self.step is None or self.step.number != record.step:
                    self.events.append(transcript.step_started(record))
                self.step = _Step(record.step)
            case ContentPartDone():
                if self.step is not None:
                    self.step.content.append(record.part)
            case ToolCallStarted():
                self._complete(record.ts)
                self.calls[record.call.id] = record.call
                self.events.append(transcript.tool_started(record.call, ts=record.ts))
            case ToolResultRecorded():
                self._tool_result(record)
            case StepEnd():
                self._step_end(record)
            case TurnEnd():
                self._open_turn()
                self.step = None
                # The final text is on screen already, in the turn's completed steps.
                self.events.append(transcript.turn_finished(record, ""))
            case Compaction():
                self.context_tokens = record.tokens_after or 0
                self.events.append(transcript.compacted(record))
            case UserCommand():
                self.user_commands += 1
                self.events.extend(transcript.user_command(record, f"user-{self.user_commands}"))
            case UsageAdded():
                self.usage = self.usage + record.usage
                self._usage_changed(record.ts, record.model)
            case Rewind():
                self._move_to(self.branches.rewind(record.turn, self._here), record.ts)
            case BranchSwitch():
                self._move_to(self.branches.switch(record.turn, self._here), record.ts)
                notice = transcript.branch_switched(record)
                if notice is not None:
                    self.events.append(notice)
            case _:
                # A standalone record (a retry, restored files...) shows as its own event.
                event = transcript.event_of(record, self.turn_id)
                if event is not None:
                    self.events.append(event)

    def _entry(self, entry: HistoryEntry, *, ts: float) -> None:
        if self.opening is not None:
            self.opening.append(entry)
            return
        # Drained into a running turn: it was queued first, then entered at a drain point.
        text = entry.message.text
        source = _QUEUED_AS.get(entry.meta.source)
        if source is not None:
            self.events.append(ev.NotificationQueued(source=source, text=text, ts=ts))
        self.events.append(transcript.drained(self.turn_id, (entry,), ts=ts, prompt_ids=()))

    def _open_turn(self) -> None:
        """The turn's opening entries are known once its first step (or its end) comes."""
        if self.opening is None:
            return
        opening, self.opening = self.opening, None
        self.events.append(transcript.turn_started(self.begin, opening, prompt_ids=()))

    def _complete(self, ts: float) -> None:
        """The step's content is whole: it shows as one completed answer (thinking, then text)."""
        step = self.step
        if step is None or step.completed:
            return
        step.completed = True
        self.events.append(
            transcript.step_completed(self.turn_id, step.number, step.content, ts=ts)
        )

    def _tool_result(self, record: ToolResultRecorded) -> None:
        call = self.calls.get(record.call_id)
        if call is not None:
            self.events.append(transcript.tool_finished(record, call.name))

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
            self._usage_changed(record.ts, record.model)

    def _usage_changed(self, ts: float, model: str | None = None) -> None:
        self.events.append(
            transcript.usage_changed(
                self.usage, self.context_tokens, self.window, ts=ts, model=model
            )
        )

    def _here(self) -> _Mark:
        return _Mark(self.events, len(self.events), self.context_tokens)

    def _move_to(self, mark: _Mark | None, ts: float) -> None:
        if mark is None:
            return
        self.events = mark.events[: mark.at]
        self.opening = None
        self.step = None
        self.context_tokens = mark.context_tokens
        if self.usage.total:  # the tokens were spent all the same
            self._usage_changed(ts)


def replay(records: Iterable[Record], *, context_window: int) -> Replay:
    replayer = _Replayer(context_window)
    for record in records:
        replayer.apply(record)
    replayer._open_turn()
    return Replay(tuple(replayer.events), replayer.usage, replayer.context_tokens)
