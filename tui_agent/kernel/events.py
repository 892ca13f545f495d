"""What the kernel tells the outside world, as frozen dataclasses, in emission order.

The agent machine passes every emission to one `emit` callback; the loop's engine adapter turns
them into loop events and event-log records. Emissions are facts about the past: the callback
must not call back into the machine synchronously (queue work instead). No emission shares a
name with a loop event (`loop.events`): the engine adapter is the one translation between them.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import (
    Finish,
    HistoryEntry,
    LLMError,
    StreamEvent,
    TokenUsage,
    ToolCall,
    ToolResult,
    ToolUpdate,
    TurnError,
)

TurnOutcome = Literal["done", "failed", "aborted"]
ToolState = Literal["preparing", "executing", "finishing", "succeeded", "failed", "aborted"]
Machine = Literal["agent", "turn", "tool"]


@dataclass(frozen=True)
class TurnOpened:
    turn_id: int
    entries: tuple[HistoryEntry, ...]  # committed on entry: notifications first, then prompts


@dataclass(frozen=True)
class StepBegun:
    turn_id: int
    step: int


@dataclass(frozen=True)
class AttemptSent:
    """The requester put an attempt on the wire (after the step gate)."""

    turn_id: int
    step: int
    attempt: int


class StreamPart(NamedTuple):
    """A delta of the current attempt; tool-call ids are already normalised.

    Immutable like the other emissions, but a named tuple: one is built per streamed chunk,
    and a frozen dataclass costs three times as much to build."""

    turn_id: int
    step: int
    event: StreamEvent


@dataclass(frozen=True)
class AttemptVoided:
    """Partial output of the current attempt is void (retry, transport retry)."""

    turn_id: int
    step: int


@dataclass(frozen=True)
class UsageRecorded:
    turn_id: int
    step: int
    usage: TokenUsage


@dataclass(frozen=True)
class RetryScheduled:
    turn_id: int
    step: int
    failed_attempt: int
    next_attempt: int
    max_attempts: int
    delay_s: float
    error: LLMError


@dataclass(frozen=True)
class StepAnswered:
    """The assistant entry of a step, with usage and finish, before any tool runs."""

    turn_id: int
    step: int
    entry: HistoryEntry
    finish: Finish | None


@dataclass(frozen=True)
class StepFailed:
    turn_id: int
    step: int
    error: TurnError


@dataclass(frozen=True)
class ToolsSpawned:
    turn_id: int
    step: int
    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class ToolProgress:
    """The runner's word on a live call: queued, awaiting_approval or running. The tool
    machine's own phases are `Transitioned`; its final state comes with `ToolSettled`."""

    call_id: str
    name: str
    status: str


@dataclass(frozen=True)
class ToolOutput:
    call_id: str
    update: ToolUpdate


@dataclass(frozen=True)
class ToolDetached:
    call_id: str
    name: str
    ack: str


@dataclass(frozen=True)
class ToolSettled:
    """A call's outcome. `result` is what enters history (errors and aborts as text)."""

    call_id: str
    name: str
    outcome: Literal["succeeded", "failed", "aborted"]
    result: ToolResult
    background: bool = False


@dataclass(frozen=True)
class InputsDrained:
    """Notifications, reminders and steers that entered history at a drain point."""

    turn_id: int
    step: int
    entries: tuple[HistoryEntry, ...]


@dataclass(frozen=True)
class SteerMerged:
    prompt_ids: tuple[str, ...]
    entry: HistoryEntry


@dataclass(frozen=True)
class PromptBlocked:
    prompt_id: str | None


@dataclass(frozen=True)
class PromptGateFailed:
    prompt_id: str | None
    error: str


@dataclass(frozen=True)
class AbortBegun:
    turn_id: int
    reason: str


@dataclass(frozen=True)
class TurnEnded:
    turn_id: int
    outcome: TurnOutcome
    produced: tuple[HistoryEntry, ...]
    steps: int
    error: TurnError | None = None
    reason: str | None = None  # the abort reason when aborted


@dataclass(frozen=True)
class Transitioned:
    """A state change of any machine, for the inspector and the event log's debug view."""

    machine: Machine
    machine_id: str
    event: str
    source: str
    target: str


KernelEvent = (
    TurnOpened
    | StepBegun
    | AttemptSent
    | StreamPart
    | AttemptVoided
    | UsageRecorded
    | RetryScheduled
    | StepAnswered
    | StepFailed
    | ToolsSpawned
    | ToolProgress
    | ToolOutput
    | ToolDetached
    | ToolSettled
    | InputsDrained
    | SteerMerged
    | PromptBlocked
    | PromptGateFailed
    | AbortBegun
    | TurnEnded
    | Transitioned
)
