"""What the engine adapter tells the loop's turn policy (`loop._policy.TurnPolicy` implements it).

Plain facts, no kernel types: a turn started, inputs drained, a step finished, a tool result
arrived, a turn ended; plus the two side channels the kernel awaits (the prompt gate and the
after-tool hook) and where loop events go.
"""

from __future__ import annotations

import asyncio
from typing import Literal, Protocol

from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop import events as ev
from tui_agent.vocab import (
    Finish,
    HistoryEntry,
    Message,
    TokenUsage,
    ToolCall,
    ToolResult,
    TurnError,
)


@dataclass(frozen=True)
class StepFacts:
    turn_id: int
    step: int
    usage: TokenUsage | None
    finish: Finish | None


@dataclass(frozen=True)
class TurnFacts:
    turn_id: int
    outcome: str  # done | failed | aborted
    steps: int
    produced: tuple[HistoryEntry, ...]
    error: TurnError | None
    reason: str | None


class EngineListener(Protocol):
    def publish(self, event: ev.LoopEvent, after: asyncio.Future[None] | None = None) -> None:
        """Deliver `event` to observers in order; with `after`, not before that future is
        done (and every later event waits behind it)."""
        ...

    def turn_started(self, turn_id: int, entries: tuple[HistoryEntry, ...]) -> None: ...

    def drained(self, turn_id: int, entries: tuple[HistoryEntry, ...]) -> None:
        """Inputs (steers, notifications, reminders) entered the turn's history at a drain."""
        ...

    def step_finished(self, facts: StepFacts) -> None: ...

    def usage_recorded(self, usage: TokenUsage) -> None:
        """A step's usage, as soon as its stream finished (before any tool runs)."""
        ...

    def tool_result(self, call_id: str, result: ToolResult, background: bool) -> None: ...

    def serving_model(self) -> str | None:
        """The model serving the running turn when it is not the session's (a step's log
        record names it, so a reopened session prices the step as it ran)."""
        ...

    def turn_ended(self, facts: TurnFacts) -> None: ...

    def finish_tool_at_once(self, call: ToolCall, result: ToolResult) -> ToolResult | None:
        """The after-tool hook when it needs no waiting: the result as the turn gets it, or
        None when `finish_tool` must run instead (and nothing was done)."""
        ...

    async def finish_tool(self, call: ToolCall, result: ToolResult) -> ToolResult:
        """The after-tool hook: runs before the result reaches the turn (side channel)."""
        ...

    async def gate_prompt(self, message: Message) -> tuple[bool, Message]:
        """Before a queued prompt enters history: (block?, the message to commit)."""
        ...

    def prompt_dropped(self, prompt_id: str, reason: Literal["blocked", "failed"]) -> None: ...

    def internal_error(self, error: BaseException) -> None:
        """An error the kernel caught and kept (it never breaks a transition): tell the user."""
        ...
