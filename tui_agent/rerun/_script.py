"""Reading a session's log as a script: what the model answered, what the tools returned, and
what the person did, each pinned to the record it must come before.

A log holds content parts, not the stream chunks the provider sent; `ModelCall.events`
re-chunks each recorded part into deltas (`CHUNK` characters at a time) so the machines
accumulate the answer as they did live. A call whose answer the log cuts short (a cancelled
stream, a crash) `hangs` after its last recorded part until it is stopped; a tool whose result
is missing or aborted hangs the same way. `Stop` says what stopped it: the person cancelling
(the turn ended `cancelled`), the person stopping that one call, or the process dying (a
`crash`: the log goes on in a new process, a `Life`, whose loop resumes from the folded log).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import Literal

from tui_agent.context import (
    ApprovalAnswered,
    Compaction,
    ContentPartDone,
    Notification,
    Prompt,
    Record,
    RetryRecorded,
    Steer,
    StepBegin,
    StepEnd,
    ToolCallStarted,
    ToolResultRecorded,
    TurnBegin,
    TurnEnd,
)
from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop._policy import CONTINUE_AFTER_RETRY  # the loop's own notice, not an input
from tui_agent.vocab import (
    Finish,
    Finished,
    FinishReason,
    ImagePart,
    LLMError,
    LLMErrorKind,
    MessageIdReported,
    PromptDraft,
    StreamEvent,
    StreamFailed,
    TextDelta,
    TextPart,
    ThinkDelta,
    ThinkPart,
    ToolCall,
    ToolCallDelta,
    UsageReported,
)

CHUNK = 16  # characters per re-chunked delta: small enough that a player shows text arrive

Stop = Literal["cancel", "stop_call", "crash"]

# The records the loop itself writes while it runs; every other kind (the first line, a
# `!command`, checkpoints, rewinds, kinds added later) passes through from the log as is. An
# answer to a call's approval is the loop's too (`Script.answers`); the others (a plan's, a
# trust question's, a sub-agent's) are asked by parts the rerun does not run, and pass.
DRIVEN: frozenset[str] = frozenset(
    {
        "turn.begin",
        "prompt",
        "notification",
        "steer",
        "step.begin",
        "content.part",
        "tool.call",
        "tool.result",
        "step.end",
        "compaction",
        "turn.end",
        "retry",
    }
)


class Unreplayable(Exception):
    """The log holds something a rerun cannot reproduce; `index` is the record's number."""

    def __init__(self, index: int, why: str) -> None:
        super().__init__(f"record {index + 1}: {why}")
        self.index = index


@dataclass
class ModelCall:
    """One request the provider answers, opened by the record at `at`."""

    at: int
    parts: list[TextPart | ThinkPart | ImagePart] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    end: StepEnd | None = None
    error: LLMError | None = None
    summary: str | None = None  # a compaction's answer
    stop: Stop | None = None  # hangs after its recorded parts until this stops it

    def events(self) -> list[StreamEvent]:
        if self.error is not None:
            return [StreamFailed(error=self.error)]
        if self.summary is not None:
            return [*_chunks(self.summary), _finished(FinishReason.END_TURN, None)]
        events: list[StreamEvent] = []
        for part in self.parts:
            events.extend(_chunks_of(part))
        for index, call in enumerate(self.calls):
            events.append(
                ToolCallDelta(
                    index=index, id=call.raw_id or call.id, name=call.name, arguments=call.arguments
                )
            )
        end = self.end
        if end is None:
            return events
        # What an attempt cut short had reported so far is in its end record all the same.
        if end.message_id is not None:
            events.append(MessageIdReported(message_id=end.message_id))
        if end.usage is not None:
            events.append(UsageReported(usage=end.usage))
        if end.finish_reason not in (FinishReason.INTERRUPTED, FinishReason.ERROR):
            events.append(_finished(end.finish_reason, end.raw_finish_reason))
        return events


def _finished(reason: FinishReason, raw: str | None) -> Finished:
    return Finished(finish=Finish(reason=reason, raw=raw))


def _chunks(text: str) -> list[StreamEvent]:
    return [TextDelta(text=text[i : i + CHUNK]) for i in range(0, len(text), CHUNK)]


def _chunks_of(part: TextPart | ThinkPart | ImagePart) -> list[StreamEvent]:
    if isinstance(part, TextPart):
        return _chunks(part.text)
    if isinstance(part, ThinkPart):
        body = part.think
        pieces: list[StreamEvent] = [
            ThinkDelta(text=body[i : i + CHUNK]) for i in range(0, len(body), CHUNK)
        ]
        if part.signature is not None or part.encrypted is not None:
            pieces.append(ThinkDelta(signature=part.signature, encrypted=part.encrypted))
        return pieces
    return []  # a model never answers with an image


@dataclass(frozen=True)
class Input:
    """Something the person did, issued once the rerun has written `after` records."""

    after: int
    kind: Literal["submit", "steer", "notify", "compact"]
    text: str = ""
    draft: PromptDraft | None = None
    images: tuple[ImagePart, ...] = ()
    model: str | None = None  # the model a custom command's prompt asked for


@dataclass
class Life:
    """The records one process wrote: `start` to `end` (exclusive) of the log."""

    start: int
    end: int = 0
    crashed: bool = False  # ends with a turn still open: the process died


@dataclass
class Script:
    records: list[Record]
    model_calls: list[ModelCall]
    results: dict[str, ToolResultRecorded]
    hangs: dict[str, Stop]  # tool calls that wait to be stopped, by call id
    inputs: list[Input]
    lives: list[Life]
    answers: dict[str, ApprovalAnswered]  # the calls the person was asked about, by call id
    answered_at: dict[str, int]  # where each of those answers is in the log

    def driven(self, index: int) -> bool:
        """Whether the rerun's loop writes the log's record `index` itself."""
        record = self.records[index]
        if isinstance(record, ApprovalAnswered):
            return self.answered_at.get(record.call_id) == index
        return record.type in DRIVEN


def _error_of(code: str, message: str, status: int | None) -> LLMError:
    kind = code.removeprefix("llm.")
    try:
        return LLMError(kind=LLMErrorKind(kind), message=message, status=status)
    except ValueError:
        return LLMError(kind=LLMErrorKind.UNKNOWN, message=message, status=status)


class _Reader:
    def __init__(self, records: Sequence[Record]) -> None:
        self.records = list(records)
        self.calls: list[ModelCall] = []
        self.by_step: dict[str, ModelCall] = {}
        self.results: dict[str, ToolResultRecorded] = {}
        self.tool_calls: dict[str, ToolCall] = {}
        self.inputs: list[Input] = []
        self.lives = [Life(0)]
        self.turn: TurnBegin | None = None  # the last turn begun, while any is open
        self.open: set[int] = set()  # turns begun and not ended
        self.turn_at = 0
        self.last_turn_begin: int | None = None  # in this life
        self.queued_after = 0  # when the prompts queued for the open turn were entered
        self.last_turn_id = -1
        self.turn_calls: list[ModelCall] = []
        self.answers: dict[str, ApprovalAnswered] = {}
        self.answered_at: dict[str, int] = {}

    def read(self) -> Script:
        for index, record in enumerate(self.records):
            self.apply(index, record)
        if self.open:
            self._crash(len(self.records))
        self.lives[-1].end = len(self.records)
        hangs: dict[str, Stop] = {}
        for call_id in self.tool_calls:
            result = self.results.get(call_id)
            if result is None:
                hangs[call_id] = "crash"
            elif result.outcome == "aborted" or _aborted(result):
                hangs[call_id] = "stop_call" if _stopped_alone(result) else "cancel"
        self.inputs.sort(key=lambda item: item.after)
        return Script(
            self.records,
            self.calls,
            self.results,
            hangs,
            self.inputs,
            self.lives,
            self.answers,
            self.answered_at,
        )

    def apply(self, index: int, record: Record) -> None:
        match record:
            case TurnBegin():
                if record.turn_id <= self.last_turn_id:  # a new process counts from 0
                    self._crash(index)
                self._turn_begins(index, record)
            case Prompt():
                self._prompt(index, record)
            case Steer():
                ids = record.prompt_ids
                if len(ids) != 1:
                    raise Unreplayable(index, f"a steer of {len(ids)} queued prompts at once")
                self.inputs.append(
                    Input(self._when(index, record), "steer", record.entry.message.text)
                )
            case Notification() if record.entry.message.text != CONTINUE_AFTER_RETRY:
                self.inputs.append(
                    Input(self._when(index, record), "notify", record.entry.message.text)
                )
            case StepBegin():
                call = ModelCall(index)
                self.calls.append(call)
                self.by_step[record.uuid] = call
                self.turn_calls.append(call)
            case ContentPartDone():
                self._step(index, record.step_uuid).parts.append(record.part)
            case ToolCallStarted():
                self._step(index, record.step_uuid).calls.append(record.call)
                self.tool_calls[record.call.id] = record.call
            case ToolResultRecorded():
                self.results[record.call_id] = record
            case ApprovalAnswered(kind="tool") if self._asked_here(index, record):
                self.answers[record.call_id] = record
                self.answered_at[record.call_id] = index
            case StepEnd():
                self._step(index, record.uuid).end = record
            case RetryRecorded():
                if not self.turn_calls:
                    raise Unreplayable(index, "a retry with no attempt before it")
                failed = self.turn_calls[-1]
                failed.error = _error_of(record.error_code, record.message, record.status)
            case Compaction():
                if self.turn_calls and _unexplained(self.turn_calls[-1]):
                    # An attempt that failed for a too long context, compacted on the spot.
                    self.turn_calls[-1].error = LLMError(
                        kind=LLMErrorKind.CONTEXT_OVERFLOW, message="context too long"
                    )
                self.calls.append(ModelCall(index, summary=record.summary))
                if self.turn is None:
                    self.inputs.append(Input(index, "compact"))
            case TurnEnd():
                self._turn_ends(index, record)

    def _asked_here(self, index: int, record: ApprovalAnswered) -> bool:
        """A call of this log asked, not a sub-agent's (its requests name the `task` call).
        The answer comes between the call and its result, or the log is not one a loop wrote."""
        call = self.tool_calls.get(record.call_id)
        if call is None or record.call_id in self.results:
            where = "no call before it made" if call is None else "had its result already"
            raise Unreplayable(index, f'an answer about call "{record.call_id}", which {where}')
        return call.name == record.name

    def _when(self, index: int, record: Steer | Notification) -> int:
        """Right after the last record written before the person acted (by its time); an entry
        that opens a turn came before the turn began."""
        if self.turn is not None and not self.turn_calls:
            return self.turn_at
        created = record.entry.meta.created_at
        after = index
        if created is not None:
            while after > 0 and self.records[after - 1].ts > created:
                after -= 1
        floor = self.turn_at + 1 if self.turn is not None else self.lives[-1].start
        return max(min(after, index), floor)

    def _step(self, index: int, uuid: str) -> ModelCall:
        call = self.by_step.get(uuid)
        if call is None:
            raise Unreplayable(index, f"a record of step {uuid} before its step.begin")
        return call

    def _turn_begins(self, index: int, record: TurnBegin) -> None:
        queued = len(record.prompt_ids) > 1 and self.last_turn_begin is not None
        self.turn, self.turn_at, self.last_turn_id = record, index, record.turn_id
        self.open.add(record.turn_id)
        # Several prompts open a turn only when they waited in the queue: the person entered
        # them while the turn before ran.
        last = self.last_turn_begin
        self.queued_after = last + 1 if queued and last is not None else index
        self.last_turn_begin = index
        self.turn_calls = []

    def _prompt(self, index: int, record: Prompt) -> None:
        turn = self.turn
        if turn is None or record.prompt_id not in turn.prompt_ids:
            raise Unreplayable(index, f"prompt {record.prompt_id} outside the turn that takes it")
        images = tuple(part for part in record.message.content if isinstance(part, ImagePart))
        after = self.queued_after if len(turn.prompt_ids) > 1 else self.turn_at
        self.inputs.append(
            Input(
                after,
                "submit",
                record.message.text,
                draft=record.draft,
                images=images,
                model=record.model,
            )
        )

    def _turn_ends(self, index: int, record: TurnEnd) -> None:
        # A turn retried after an overflow goes on as a new kernel turn, and its end names the
        # first one's id: any end closes every turn open.
        self.open.clear()
        self.turn = None
        last = self.turn_calls[-1] if self.turn_calls else None
        result = record.result
        if last is not None and _unexplained(last):
            if result.type == "failed" and result.error is not None:
                code = str(result.error.get("code", ""))
                if code.startswith("llm."):
                    last.error = _error_of(code, str(result.error.get("message", "")), None)
            elif result.type == "cancelled":
                last.stop = "cancel"
        # An interrupted step with calls was stopped in its tools (they hang), not its stream.
        end = last.end if last is not None else None
        if last is not None and not last.calls and end is not None and _interrupted(end):
            last.stop = "cancel"

    def _crash(self, index: int) -> None:
        life = self.lives[-1]
        life.end, life.crashed = index, bool(self.open)
        for call in self.turn_calls:
            if call.end is None and call.error is None and self.open:
                call.stop = "crash"
        self.lives.append(Life(index))
        self.turn = None
        self.open = set()
        self.last_turn_begin = None
        self.turn_calls = []


def _interrupted(end: StepEnd) -> bool:
    return end.finish_reason is FinishReason.INTERRUPTED


def _unexplained(call: ModelCall) -> bool:
    """An attempt that ended without an answer and with no failure known yet."""
    failed = call.end is None or call.end.finish_reason is FinishReason.ERROR
    return failed and call.error is None and call.stop is None


def _aborted(result: ToolResultRecorded) -> bool:
    display = result.display or {}
    return display.get("outcome") == "aborted"


def _stopped_alone(result: ToolResultRecorded) -> bool:
    return (result.display or {}).get("reason") == "user_stopped_call"


def read_script(records: Sequence[Record]) -> Script:
    """The script of a session's records (the log of one session, sub-agents' logs apart)."""
    return _Reader(records).read()
