"""What the engine tells the event log, named by what happened (implemented in `loop.journal`)."""

from __future__ import annotations

import asyncio
from typing import Literal, Protocol

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

ToolOutcome = Literal["succeeded", "failed", "aborted"]


class Journal(Protocol):
    def durable(self) -> asyncio.Future[None]:
        """Resolves once every record written so far is on disk (flushed and fsynced)."""
        ...

    def turn_begin(self, turn_id: int, prompt_ids: tuple[str, ...]) -> None: ...

    def entry(self, entry: HistoryEntry) -> None: ...

    def step_begin(self, uuid: str, turn_id: int, step: int) -> None: ...

    def content_part(self, step_uuid: str, part: ContentPart) -> None: ...

    def tool_call(self, step_uuid: str, call: ToolCall) -> None: ...

    def tool_result(
        self, call_id: str, result: ToolResult, outcome: ToolOutcome | None = None
    ) -> None: ...

    def step_end(
        self,
        uuid: str,
        reason: FinishReason,
        raw: str | None = None,
        usage: TokenUsage | None = None,
    ) -> None: ...

    def retrying(self, event: Retrying) -> None:
        """An attempt failed and another follows: the transcript shows it (see `loop.replay`)."""
        ...

    def turn_end(self, turn_id: int, result: TurnResult) -> None: ...

    def usage_added(self, usage: TokenUsage) -> None:
        """Tokens spent outside this log's steps (a sub-agent's), counted in the totals."""
        ...

    def user_command(self, command: str, output: str, status: ToolStatus) -> None:
        """A `!command` the user ran (its row in a resumed transcript and in exports)."""
        ...

    def compaction(
        self, summary: str, kept: tuple[HistoryEntry, ...], before: int, after: int
    ) -> None: ...

    def error(self, text: str) -> None:
        """A failure the loop caught and reported (not part of history)."""
        ...
