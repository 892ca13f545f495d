"""Folding event-log records back into history, repairing what a crash or a cancel left open.

The rules (docs/loop-spec.md §7): a `step.begin` opens an assistant; its content parts and tool
calls collect on it; results collect per call id. The open step is settled at a successful
`step.end`, at the next `step.begin`, or at the end of the log: unanswered calls get an error
result saying the tool was interrupted, an assistant with neither calls nor substantive
content is dropped, and messages that arrived meanwhile (deferred, so they never split a tool
exchange) follow it. `step.end{interrupted|error}` changes nothing: a failed attempt's partial
stays open until the next step decides its fate. A `compaction` replaces everything before it.
A `rewind` puts the history back as it was at the `turn.begin` it names, a `branch.switch` as it
was when the log last left the turn it names (turns are counted from the start of the log, so a
fold that must honour either reads the whole log; see `Branches`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import field
from pathlib import Path

from tui_agent.context._branches import Branches
from tui_agent.context._bulk import gc_paused
from tui_agent.context._log import EventLogError, parse_log
from tui_agent.context._records import (
    ApprovalAnswered,
    BranchSwitch,
    Compaction,
    ContentPartDone,
    Entry,
    ErrorReported,
    FileCheckpoint,
    FilesRestored,
    HookRan,
    Notification,
    Prompt,
    Record,
    Reminder,
    RetryRecorded,
    Rewind,
    SessionMeta,
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
from tui_agent.context._summary import summary_entry
from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import (
    ContentPart,
    EntryMeta,
    Finish,
    FinishReason,
    HistoryEntry,
    Message,
    TextPart,
    TokenUsage,
    ToolCall,
    is_vacuous,
)

INTERRUPTED_TOOL_OUTPUT = (
    "Tool execution was interrupted before its result was recorded. "
    "Do not assume the tool completed successfully."
)

_UNSEALING = frozenset({FinishReason.INTERRUPTED, FinishReason.ERROR})
_COMPACTION_LINE = b'{"type":"compaction"'
_REWIND_LINE = b'{"type":"rewind"'
_SWITCH_LINE = b'{"type":"branch.switch"'


@dataclass
class _OpenStep:
    uuid: str | None  # None: adopted from existing history, takes the first uuid it sees
    created_at: float | None
    content: list[ContentPart] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    results: dict[str, HistoryEntry] = field(default_factory=dict)
    finish: Finish | None = None
    usage: TokenUsage | None = None
    model: str | None = None
    message_id: str | None = None
    interrupted: bool = False  # ended by a cancel: its text is a salvaged partial answer

    def owns(self, step_uuid: str) -> bool:
        if self.uuid is None:
            self.uuid = step_uuid
        return self.uuid == step_uuid

    @property
    def pending(self) -> list[str]:
        return [call.id for call in self.calls if call.id not in self.results]

    def settled(self) -> list[HistoryEntry]:
        if not self.calls and all(is_vacuous(part) for part in self.content):
            return []
        assistant = HistoryEntry(
            message=Message(
                role="assistant", content=tuple(self.content), tool_calls=tuple(self.calls)
            ),
            meta=EntryMeta(
                # As the live history has it, so the model is told the answer was cut off.
                source="salvaged" if self.interrupted and not self.calls else "llm",
                created_at=self.created_at,
                model=self.model,
                usage=self.usage,
                finish=self.finish,
                message_id=self.message_id,
            ),
        )
        answers = [self.results.get(call.id) or interrupted_result(call.id) for call in self.calls]
        return [assistant, *answers]


class Fold:
    """Incremental fold: `apply` records in log order, read `entries()` at any point."""

    def __init__(self, entries: Iterable[HistoryEntry] = ()) -> None:
        self._committed: list[HistoryEntry] = []
        self._open: _OpenStep | None = None
        self._deferred: list[HistoryEntry] = []
        # The committed list and its length at each turn's start and end (it is only ever
        # appended to, or replaced), so a rewind or a switch can cut back to it without
        # copying at every turn.
        self._branches: Branches[tuple[list[HistoryEntry], int]] = Branches()
        self._reset(list(entries))

    @property
    def pending(self) -> tuple[str, ...]:
        """Call ids of the open step that have no result yet, in call order."""
        return tuple(self._open.pending) if self._open is not None else ()

    def entries(self) -> list[HistoryEntry]:
        """The history as if the log ended here (the open step settled), without settling it."""
        return [*self._committed, *self._settled_tail()]

    def settle(self) -> None:
        self._committed.extend(self._settled_tail())
        self._open = None
        self._deferred = []

    def extend(self, records: Iterable[Record]) -> None:
        for record in records:
            self.apply(record)

    def apply(self, record: Record) -> None:
        match record:
            # Ordered by how often each record occurs in a log: this runs per record.
            case ContentPartDone():
                if self._open is not None and self._open.owns(record.step_uuid):
                    self._open.content.append(record.part)
            case ToolCallStarted():
                step = self._open
                if (
                    step is not None
                    and step.owns(record.step_uuid)
                    and all(call.id != record.call.id for call in step.calls)
                ):
                    step.calls.append(record.call)
            case ToolResultRecorded():
                step = self._open
                if step is not None and record.call_id in step.pending:
                    step.results[record.call_id] = _result_entry(record)
            case StepBegin():
                self.settle()
                self._open = _OpenStep(uuid=record.uuid, created_at=record.ts)
            case StepEnd():
                self._end_step(record)
            case Prompt():
                meta = EntryMeta(source="input", prompt_id=record.prompt_id, created_at=record.ts)
                self._append(HistoryEntry(message=record.message, meta=meta))
            case Notification() | Reminder() | Steer() | Entry():
                self._append(record.entry)
            case Compaction():
                self._reset([summary_entry(record.summary, created_at=record.ts), *record.kept])
            case TurnBegin():
                self._branches.begin(self._here())
            case Rewind():
                self._move_to(self._branches.rewind(record.turn, self._here))
            case BranchSwitch():
                self._move_to(self._branches.switch(record.turn, self._here))
            case (
                SessionMeta()
                | TurnEnd()
                | RetryRecorded()
                | UsageAdded()
                | UserCommand()
                | FileCheckpoint()
                | FilesRestored()
                | ErrorReported()
                | HookRan()
                | ApprovalAnswered()
            ):
                pass

    def _here(self) -> tuple[list[HistoryEntry], int]:
        self.settle()
        return self._committed, len(self._committed)

    def _move_to(self, found: tuple[list[HistoryEntry], int] | None) -> None:
        if found is not None:
            entries, length = found
            self._committed = entries[:length]

    def _end_step(self, record: StepEnd) -> None:
        step = self._open
        if step is None or not step.owns(record.uuid):
            return
        if record.finish_reason in _UNSEALING:
            step.interrupted = record.finish_reason is FinishReason.INTERRUPTED
            return
        step.finish = Finish(reason=record.finish_reason, raw=record.raw_finish_reason)
        step.usage = record.usage
        step.model = record.model
        step.message_id = record.message_id
        self.settle()

    def _append(self, entry: HistoryEntry) -> None:
        # While a step is open its assistant is not placed yet; anything appended now goes
        # after the step's tool results, so it can never split an exchange.
        if self._open is not None:
            self._deferred.append(entry)
        else:
            self._committed.append(entry)

    def _settled_tail(self) -> list[HistoryEntry]:
        step = self._open.settled() if self._open is not None else []
        return [*step, *self._deferred]

    def _reset(self, entries: list[HistoryEntry]) -> None:
        """Start over from `entries`, adopting a trailing exchange whose results are missing."""
        self._open = None
        self._deferred = []
        start = _unfinished_exchange_start(entries)
        if start is None:
            self._committed = entries
            return
        assistant = entries[start]
        step = _OpenStep(
            uuid=None,
            created_at=assistant.meta.created_at,
            content=list(assistant.message.content),
            calls=list(assistant.message.tool_calls),
            finish=assistant.meta.finish,
            usage=assistant.meta.usage,
            model=assistant.meta.model,
            message_id=assistant.meta.message_id,
        )
        for answer in entries[start + 1 :]:
            if answer.message.tool_call_id is not None:
                step.results.setdefault(answer.message.tool_call_id, answer)
        self._committed = entries[:start]
        self._open = step


def _unfinished_exchange_start(entries: list[HistoryEntry]) -> int | None:
    """Index of a last assistant whose calls are not all answered by the tool messages after it."""
    for index in range(len(entries) - 1, -1, -1):
        message = entries[index].message
        if message.role == "tool":
            continue
        if message.role != "assistant" or not message.tool_calls:
            return None
        answered = {entry.message.tool_call_id for entry in entries[index + 1 :]}
        ids = {call.id for call in message.tool_calls}
        return None if ids <= answered else index
    return None


def _result_entry(record: ToolResultRecorded) -> HistoryEntry:
    content: tuple[ContentPart, ...] = (
        record.output
        if not isinstance(record.output, str)
        else (TextPart(text=record.output),)
        if record.output
        else ()
    )
    return HistoryEntry(
        message=Message(
            role="tool", content=content, tool_call_id=record.call_id, is_error=record.is_error
        ),
        meta=EntryMeta(source="tool", note=record.note, created_at=record.ts),
    )


def interrupted_result(call_id: str) -> HistoryEntry:
    """The error result a call gets when the log ends (or moves on) without its result."""
    return HistoryEntry(
        message=Message(
            role="tool",
            content=(TextPart(text=INTERRUPTED_TOOL_OUTPUT),),
            tool_call_id=call_id,
            is_error=True,
        ),
        meta=EntryMeta(source="tool"),
    )


def fold(records: Iterable[Record], entries: Iterable[HistoryEntry] = ()) -> list[HistoryEntry]:
    """The well-formed history `records` describe (on top of `entries`), open step settled."""
    with gc_paused():
        folder = Fold(entries)
        folder.extend(records)
        folder.settle()
        return folder.entries()


def fold_log(records: Sequence[Record]) -> list[HistoryEntry]:
    """`fold(records)` of a whole log's records, folded from the last compaction on: it replaces
    everything before it (as in `load_history`, here for records already read), unless the log
    holds a rewind or a branch switch, which may reach back past it. On a long day the fold of
    every record was a tenth of a second of opening the session."""
    if any(isinstance(record, Rewind | BranchSwitch) for record in records):
        return fold(records)
    last = max((i for i, record in enumerate(records) if isinstance(record, Compaction)), default=0)
    return fold(records[last:])


def load_history(path: Path | str, bad_lines: list[int] | None = None) -> list[HistoryEntry]:
    """The history of the session log at `path`: `fold(read_log(path))`, but cheaper.

    A compaction record replaces everything before it, so only the lines from the last one on
    are parsed (unless the log holds a rewind or a branch switch, which may reach back past
    it). One collector pause covers reading and folding: the records die as soon as the fold
    is done and are freed by reference counting, never walked by the collector. Damaged lines
    are skipped, their numbers added to `bad_lines`; a file that cannot be read raises
    `EventLogError`.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise EventLogError(f"cannot read {path}: {exc.strerror or exc}") from exc
    moves = _REWIND_LINE in data or _SWITCH_LINE in data
    start = 0 if moves else _last_compaction(data)
    first_line = data.count(b"\n", 0, start) + 1
    with gc_paused():
        return fold(parse_log(data[start:], bad_lines, first_line=first_line))


def _last_compaction(data: bytes) -> int:
    """Offset of the last whole compaction line (0 when there is none)."""
    end = len(data)
    while True:
        at = data.rfind(b"\n" + _COMPACTION_LINE, 0, end) + 1
        if at == 0:
            return 0  # none after the first line; a first-line compaction changes nothing
        if data.find(b"\n", at) != -1:
            return at
        end = at - 1  # a compaction torn by a crash: the one before it counts
