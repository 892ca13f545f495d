"""What the transcript shows of each logged fact: the one record -> loop event function per fact.

A fact the user must see again after a restart reaches observers on one path: the loop builds
its event-log record, `LogJournal` (the one writer) appends it, and the loop event is built from
that record by a function here. Resuming a session (`loop.replay`) reads the same records and
calls the same functions, so a fact's fields are copied from record to event in one place and a
resumed transcript cannot drift from the live one. Live-only details (usage and finish reason
on a completed step, the prompt ids a live queue knows) come in as keyword arguments; the
record stays the source of everything both paths show.

Facts the log never keeps (deltas, tool states, queue and approval changes, notices) are built
where they happen; they are not replayed, so they have no second construction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from tui_agent.context import (
    BranchSwitch,
    Compaction,
    Entry,
    FilesRestored,
    Notification,
    Prompt,
    Record,
    Reminder,
    RetryRecorded,
    Steer,
    StepBegin,
    ToolResultRecorded,
    TurnBegin,
    TurnEnd,
    UserCommand,
)
from tui_agent.loop import events as ev
from tui_agent.vocab import ContentPart, HistoryEntry, Message, TokenUsage, ToolCall, ToolResult

_Fact = TypeVar("_Fact", bound=Callable[..., ev.LoopEvent])
# A record that stands alone (one record, one event, needing only the turn it is in): its event
# function, so replay and the live loop (`event_of`) need no code of their own for it.
_STANDALONE: dict[type[Record], Callable[[Any, int], ev.LoopEvent]] = {}


def _standalone(record_type: type[Record]) -> Callable[[_Fact], _Fact]:
    def register(build: _Fact) -> _Fact:
        _STANDALONE[record_type] = build
        return build

    return register


def event_of(record: Record, turn_id: int) -> ev.LoopEvent | None:
    """The loop event of a standalone record (None for the others, which replay pairs)."""
    build = _STANDALONE.get(type(record))
    return None if build is None else build(record, turn_id)


def entry_record(entry: HistoryEntry) -> Record:
    """The record of an entry joining history, named by where it came from (`fold` reads it)."""
    meta = entry.meta
    if meta.source == "input" and meta.in_turn:
        return Steer(prompt_ids=meta.prompt_ids, entry=entry)
    if meta.source == "input" and meta.prompt_id:
        return Prompt(
            prompt_id=meta.prompt_id, message=entry.message, draft=meta.draft, model=meta.model
        )
    if meta.source == "notify":
        return Notification(entry=entry)
    if meta.source == "reminder":
        return Reminder(key=meta.key or "", entry=entry)
    return Entry(entry=entry)


def turn_model_of(entries: Sequence[HistoryEntry]) -> str | None:
    """The model a turn opened by `entries` runs on (see `loop.turn_model`): the one every
    prompt among them asked for (`meta.model`); a prompt that asked for none, or for another,
    keeps the turn on the session's."""
    asked = {entry.meta.model for entry in entries if entry.meta.source == "input"}
    return next(iter(asked)) if len(asked) == 1 else None


def turn_started(
    record: TurnBegin, entries: Sequence[HistoryEntry], *, prompt_ids: tuple[str, ...]
) -> ev.TurnStarted:
    """`prompt_ids`: the live queue's ids; a replay passes none, because a resumed loop numbers
    its prompts from `p1` again and a replayed event must not name the new loop's prompts."""
    return ev.TurnStarted(
        turn_id=record.turn_id,
        prompt_ids=prompt_ids,
        texts=tuple(entry.message.text for entry in entries),
        model=turn_model_of(entries),
        ts=record.ts,
    )


def step_started(record: StepBegin) -> ev.StepStarted:
    return ev.StepStarted(turn_id=record.turn_id, step=record.step, ts=record.ts)


def step_completed(
    turn_id: int,
    step: int,
    content: Sequence[ContentPart],
    *,
    ts: float,
    finish_reason: str | None = None,
    usage: TokenUsage | None = None,
) -> ev.StepCompleted:
    """The step's logged content parts shown as one answer (thinking, then text)."""
    message = Message(role="assistant", content=tuple(content))
    return ev.StepCompleted(
        turn_id=turn_id,
        step=step,
        text=message.text,
        thinking=message.thinking,
        finish_reason=finish_reason,
        usage=usage,
        ts=ts,
    )


def tool_started(call: ToolCall, *, ts: float) -> ev.ToolStarted:
    return ev.ToolStarted(id=call.id, name=call.name, arguments=call.arguments, ts=ts)


def tool_result_record(
    call_id: str, result: ToolResult, outcome: ev.ToolOutcome | None
) -> ToolResultRecorded:
    """The record of a call's result (its event comes from it through `tool_finished`)."""
    return ToolResultRecorded(
        call_id=call_id,
        output=result.output,
        is_error=result.is_error,
        note=result.note,
        display=result.display,
        outcome=outcome,
    )


def tool_finished(
    record: ToolResultRecorded, name: str, *, background: bool = False
) -> ev.ToolFinished:
    # Logs older than `outcome` knew only the machine's word for a result: succeeded.
    return ev.ToolFinished(
        id=record.call_id,
        name=name,
        outcome=record.outcome or "succeeded",
        output=ToolResult(output=record.output).text,
        is_error=record.is_error,
        display=record.display,
        background=background,
        ts=record.ts,
    )


@_standalone(RetryRecorded)
def retrying(record: RetryRecorded, turn_id: int) -> ev.Retrying:
    """The record keeps the event's words; the turn is the one the log is in."""
    return ev.Retrying(
        turn_id=turn_id,
        step=record.step,
        attempt=record.attempt,
        max_attempts=record.max_attempts,
        delay_s=record.delay_s,
        error_code=record.error_code,
        message=record.message,
        status=record.status,
        ts=record.ts,
    )


def drained(
    turn_id: int, entries: Sequence[HistoryEntry], *, ts: float, prompt_ids: tuple[str, ...]
) -> ev.Drained:
    """`prompt_ids` as in `turn_started`: the live queue's, none on replay."""
    return ev.Drained(
        turn_id=turn_id,
        texts=tuple(entry.message.text for entry in entries),
        prompt_ids=prompt_ids,
        ts=ts,
    )


def turn_finished(
    record: TurnEnd, text: str, usage: ev.CostedUsage | None = None
) -> ev.TurnFinished:
    """`text`: the final answer the live turn knows (the transcript has it from its steps);
    `usage`: the turn's tokens and cost, which the live loop's ledger knows."""
    return ev.TurnFinished(
        turn_id=record.turn_id,
        text=text,
        result=ev.TurnResult(**record.result.model_dump()),
        usage=usage,
        ts=record.ts,
    )


def compacted(record: Compaction) -> ev.Compacted:
    return ev.Compacted(
        summary=record.summary,
        tokens_before=record.tokens_before or 0,
        tokens_after=record.tokens_after or 0,
        ts=record.ts,
    )


@_standalone(FilesRestored)
def files_restored(record: FilesRestored, turn_id: int = 0) -> ev.Notice:
    """What /undo and /rewind say (and a resumed session shows again)."""
    if not record.paths:
        text = "no files needed restoring: they were already as before"
    else:
        text = "restored " + ", ".join(sorted(record.paths))
    return ev.Notice(level="info", text=text, ts=record.ts)


def branch_switched(record: BranchSwitch) -> ev.Notice | None:
    """What a switch in the session tree that moved files says (and a resumed session shows
    again); one that moved only the conversation shows as the branch's transcript itself."""
    if not record.paths:
        return None
    text = "switched branch: restored " + ", ".join(sorted(record.paths))
    return ev.Notice(level="info", text=text, ts=record.ts)


def user_command(record: UserCommand, call_id: str) -> tuple[ev.ToolStarted, ev.ToolFinished]:
    """The row a `!command` drew: a call named `!`, as the app draws it."""
    arguments = json.dumps({"command": record.command})
    return (
        ev.ToolStarted(id=call_id, name="!", arguments=arguments, ts=record.ts),
        ev.ToolFinished(
            id=call_id,
            name="!",
            outcome="aborted" if record.status == "aborted" else "succeeded",
            output=record.output,
            is_error=record.status == "failed",
            ts=record.ts,
        ),
    )


def usage_changed(
    total: TokenUsage,
    context_tokens: int,
    context_window: int,
    *,
    ts: float,
    cost_usd: float | None = None,
    model: str | None = None,
) -> ev.UsageChanged:
    """`cost_usd`: the session's spend when the live loop knows its price (a resumed one is
    priced afterwards, from the logged steps)."""
    return ev.UsageChanged(
        total=total,
        context_tokens=context_tokens,
        context_window=context_window,
        cost_usd=cost_usd,
        model=model,
        ts=ts,
    )
