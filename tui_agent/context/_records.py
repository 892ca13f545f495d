"""Event-log records: the words `events.jsonl` is written in, one JSON object per line.

Each record is a frozen pydantic model tagged by a stable `type` (written first on the line)
and stamped with `ts` (unix seconds). The loop writes them as things happen; `fold` turns them
back into history. `durable` records (step and turn ends, compactions) are fsynced: they are
the points a crash must never lose. Unknown `type`s written by a newer version are skipped on
read, so the format can grow without breaking older readers.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from tui_agent.vocab import (
    ApprovalMode,
    ContentPart,
    FinishReason,
    HistoryEntry,
    Message,
    PromptDraft,
    RuleScope,
    TokenUsage,
    ToolCall,
    ToolStatus,
)

FORMAT_VERSION = 1


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    # Declared here so that every line starts with its type; subclasses narrow it to a Literal.
    type: str
    ts: float = Field(default_factory=time.time)

    durable: ClassVar[bool] = False


class SessionMeta(_Record):
    """The first line of a session's log. Never carries credentials, only names."""

    type: Literal["session.meta"] = "session.meta"
    session_id: str
    workspace: str
    version: int = FORMAT_VERSION
    provider: str | None = None
    model: str | None = None
    api_host: str | None = None  # scheme://host[:port] of the endpoint: what prices the model
    # The approval mode the session started in (None in logs written before it was kept).
    approval_mode: ApprovalMode | None = None


class TurnBegin(_Record):
    type: Literal["turn.begin"] = "turn.begin"
    turn_id: int
    prompt_ids: tuple[str, ...] = ()


class Prompt(_Record):
    """A user input entering history (the rewritten text, when a prompt gate rewrote it).

    `draft` is what the person typed when the message is more (attached files, pasted text in
    place of chips); logs written before it existed have none."""

    type: Literal["prompt"] = "prompt"
    prompt_id: str
    message: Message
    draft: PromptDraft | None = None
    model: str | None = None  # the model it asked its turn to run on (a command's `model:`)


class Notification(_Record):
    type: Literal["notification"] = "notification"
    entry: HistoryEntry


class Reminder(_Record):
    type: Literal["reminder"] = "reminder"
    key: str
    entry: HistoryEntry


class Steer(_Record):
    type: Literal["steer"] = "steer"
    prompt_ids: tuple[str, ...]
    entry: HistoryEntry


class Entry(_Record):
    """Any other history entry appended outside a step (async-tool notices, salvaged text)."""

    type: Literal["entry"] = "entry"
    entry: HistoryEntry


class StepBegin(_Record):
    type: Literal["step.begin"] = "step.begin"
    uuid: str
    turn_id: int
    step: int


class ContentPartDone(_Record):
    """One completed content part of the open step (text, or think with its signature)."""

    type: Literal["content.part"] = "content.part"
    step_uuid: str
    part: ContentPart


class ToolCallStarted(_Record):
    type: Literal["tool.call"] = "tool.call"
    step_uuid: str
    call: ToolCall


class ToolResultRecorded(_Record):
    """A call's result as the model will see it; `display` and `outcome` are for the UI only
    (`outcome` says a call the user stopped was aborted, not failed; absent in older logs)."""

    type: Literal["tool.result"] = "tool.result"
    call_id: str
    output: str | tuple[ContentPart, ...] = ""
    is_error: bool = False
    note: str | None = None
    display: dict[str, Any] | None = None
    duration_ms: float | None = None
    outcome: Literal["succeeded", "failed", "aborted"] | None = None


class StepEnd(_Record):
    """`interrupted` and `error` end an attempt without sealing it (see `fold`). `model`: the
    model that served the step when it was not the session's (a custom command's `model:`)."""

    type: Literal["step.end"] = "step.end"
    uuid: str
    finish_reason: FinishReason
    raw_finish_reason: str | None = None
    usage: TokenUsage | None = None
    model: str | None = None
    message_id: str | None = None

    durable: ClassVar[bool] = True


class Compaction(_Record):
    """From here on the history is the summary message followed by `kept`."""

    type: Literal["compaction"] = "compaction"
    summary: str
    kept: tuple[HistoryEntry, ...] = ()
    tokens_before: int | None = None
    tokens_after: int | None = None

    durable: ClassVar[bool] = True


class RetryRecorded(_Record):
    """An attempt of step `step` failed and attempt `attempt` follows after `delay_s`; only the
    transcript needs it (the failed attempt's own `step.end` says `error`)."""

    type: Literal["retry"] = "retry"
    step: int
    attempt: int
    max_attempts: int
    delay_s: float
    error_code: str
    message: str
    status: int | None = None


class UserCommand(_Record):
    """A `!command` the user ran, with its output and status (`done`, `failed`, `aborted`),
    as its row showed them. Not history: the output reaches the model inside the next
    prompt's text. Replay draws the row again and exports include it."""

    type: Literal["user.command"] = "user.command"
    command: str
    output: str
    status: ToolStatus


class UsageAdded(_Record):
    """Tokens spent outside this log's own steps: a sub-agent's (its steps are in its own
    log). Replay adds them to the totals, as the live loop did, so a reopened session shows
    the same figures."""

    type: Literal["usage.added"] = "usage.added"
    usage: TokenUsage
    model: str | None = None  # the model that served them, when not the session's


class ErrorReported(_Record):
    """A failure the loop caught and told the user about (a subscriber that raised, an error a
    machine recorded). Not part of history: folding skips it."""

    type: Literal["error"] = "error"
    text: str


class HookRan(_Record):
    """A user's hook command ran (`event`, the command as written, its exit code or None when
    it timed out or could not start, how long it took, what came of it). Never its environment
    or its output. Not part of history: folding skips it."""

    type: Literal["hook.ran"] = "hook.ran"
    event: str
    command: str
    exit_code: int | None
    duration_s: float
    outcome: str


RESTORE_CALL = "restore"  # the call id of the checkpoints a restore itself writes


class FileCheckpoint(_Record):
    """A tool call changed `path` (workspace-relative): `before` names the blob in the session's
    `checkpoints/` folder holding the prior content (None: the file did not exist) and `mode`
    its permission bits then (None in logs written before they were kept), `after` is the
    SHA-256 of what the call left (None: no file). The turn it belongs to is the last
    `turn.begin` before it."""

    type: Literal["file.checkpoint"] = "file.checkpoint"
    call_id: str
    path: str
    before: str | None
    after: str | None
    mode: int | None = None


class FilesRestored(_Record):
    """/undo or /rewind put `paths` back as they were before turn number `turn` (counting
    `turn.begin` records from the start of the log, from 0). Each restored file also has its
    own `file.checkpoint` (call id "restore") just before this record."""

    type: Literal["files.restored"] = "files.restored"
    turn: int
    paths: tuple[str, ...]


class Rewind(_Record):
    """The conversation goes back to just before turn number `turn` (counted as in
    `FilesRestored`); nothing before this line is deleted, folding skips the rewound turns."""

    type: Literal["rewind"] = "rewind"
    turn: int

    durable: ClassVar[bool] = True


class BranchSwitch(_Record):
    """The conversation moves to the end of turn number `turn` (counted as in `Rewind`), on
    whichever branch of the session tree it lies: the history becomes what it was when the
    log last left that turn. `paths` are the workspace files put back as they were then (each
    also has its `file.checkpoint` with call id "restore" just after this record, so the files
    the branch left had are the ones before it); empty when only the conversation moved.
    Nothing is deleted: the branch left stays in the log."""

    type: Literal["branch.switch"] = "branch.switch"
    turn: int
    paths: tuple[str, ...] = ()

    durable: ClassVar[bool] = True


class ApprovalAnswered(_Record):
    """An approval request was answered: `call_id` (the call asked about; "" for a trust
    question), the request's `kind`, what the bar showed in one line (`name`, `summary`, the
    `rule` "always" would add, `why` it asked), the `decision` with the rules an "always" added
    and where it kept them, a plan's chosen `mode`, and the `reason` the person typed with a
    denial. `stop` says nobody answered: the turn was cancelled or the call stopped while it
    waited (the loop denied it). Not history: folding skips it; a rerun answers from it."""

    type: Literal["approval.answered"] = "approval.answered"
    call_id: str
    kind: Literal["tool", "plan", "trust"] = "tool"
    name: str = ""
    summary: str = ""
    rule: str = ""
    rules: tuple[str, ...] = ()
    why: str = ""
    decision: Literal["once", "always", "deny"]
    keep: RuleScope = "session"
    mode: ApprovalMode | None = None
    reason: str | None = None
    stop: Literal["cancel", "stop_call"] | None = None

    durable: ClassVar[bool] = True


class TurnOutcome(BaseModel):
    """How a turn ended: the fields of the loop's `TurnResult`, so one converts to the other."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    type: Literal["completed", "failed", "cancelled"]
    steps: int
    truncated: bool = False
    stop_reason: str | None = None
    reason: str | None = None
    error: dict[str, Any] | None = None


class TurnEnd(_Record):
    type: Literal["turn.end"] = "turn.end"
    turn_id: int
    result: TurnOutcome

    durable: ClassVar[bool] = True


Record = Annotated[
    SessionMeta
    | TurnBegin
    | Prompt
    | Notification
    | Reminder
    | Steer
    | Entry
    | StepBegin
    | ContentPartDone
    | ToolCallStarted
    | ToolResultRecorded
    | StepEnd
    | Compaction
    | TurnEnd
    | RetryRecorded
    | UsageAdded
    | UserCommand
    | ErrorReported
    | HookRan
    | FileCheckpoint
    | FilesRestored
    | Rewind
    | BranchSwitch
    | ApprovalAnswered,
    Field(discriminator="type"),
]

RECORD_ADAPTER: TypeAdapter[Record] = TypeAdapter(Record, config=ConfigDict(defer_build=True))

# Derived from the union so a new record type cannot be forgotten here.
RECORD_TYPES: frozenset[str] = frozenset(
    member.model_fields["type"].default for member in get_args(get_args(Record)[0])
)
