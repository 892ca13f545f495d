"""The loop's public surface, as the UI and the command line see it.

`AgentLoopService` (in `service.py`) implements `LoopApi`. Observers call `subscribe` to get
every `LoopEvent` in order, and `snapshot()` for the current picture; commands are async
and return quickly (they queue work on the machines; they never wait for a turn).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from tui_agent.loop.events import LoopEvent, McpServerInfo, TurnResult
from tui_agent.loop.snapshot import LoopSnapshot

if TYPE_CHECKING:
    from tui_agent.loop.subagent import SubagentRun
from tui_agent.vocab import HistoryEntry

ApprovalMode = Literal["ask", "auto-edit", "yolo"]
ApprovalDecision = Literal["once", "always", "deny"]
PromptState = Literal[
    "pending", "running", "steered", "completed", "failed", "cancelled", "blocked"
]


@dataclass(frozen=True)
class RestorePlan:
    """What going back to just before turn `turn` (counted from 0 in the log) would do."""

    turn: int
    prompt: str  # the text that opened the turn (what a rewind puts back in the input)
    files: tuple[str, ...]  # files whose content would change
    shell: tuple[str, ...]  # shell commands run since, whose effects stay
    changed_outside: tuple[str, ...]  # of `files`: changed by someone else since the agent


@dataclass(frozen=True)
class LoopInfo:
    provider: str  # "openai" | "anthropic" | "scripted"
    model: str
    context_window: int
    approval_mode: ApprovalMode
    session_id: str
    workspace: str
    demo: bool  # the built-in scripted demo is running (no key configured)
    notices: tuple[str, ...] = ()  # what opening the session found for the user (damaged lines)


class PromptHandle(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def state(self) -> PromptState: ...

    async def result(self) -> TurnResult: ...


class LoopApi(Protocol):
    @property
    def info(self) -> LoopInfo: ...

    def history(self) -> list[HistoryEntry]: ...

    def transcript(self) -> Sequence[LoopEvent]:
        """The events that drew this session before it was opened (empty for a new one):
        replayed, they rebuild the screen as it was (see `loop.replay`)."""
        ...

    def snapshot(self) -> LoopSnapshot: ...

    def subagent(self, call_id: str) -> SubagentRun | None:
        """The sub-agent that the `task` call `call_id` started, live or done."""
        ...

    def subscribe(self, callback: Callable[[LoopEvent], None]) -> Callable[[], None]:
        """Call `callback` for every event from now on; returns an unsubscribe function."""
        ...

    def events(self) -> AsyncIterator[LoopEvent]: ...

    async def submit(self, text: str, *, steer_if_active: bool = False) -> PromptHandle: ...

    async def steer(self, prompt_ids: list[str]) -> bool: ...

    async def cancel(self, prompt_id: str | None = None, *, force: bool = False) -> bool:
        """No id: cancel the active turn (`force` ends it at once). An id: drop a queued prompt."""
        ...

    async def cancel_tool(self, call_id: str) -> bool: ...

    async def edit_queued(self, prompt_id: str, text: str) -> bool: ...

    async def move_queued(self, prompt_id: str, offset: int) -> bool: ...

    async def notify(self, text: str) -> None: ...

    async def remind(self, key: str, text: str) -> None: ...

    async def answer_approval(
        self, request_id: str, decision: ApprovalDecision, reason: str | None = None
    ) -> None: ...

    def set_approval_mode(self, mode: ApprovalMode) -> None: ...

    async def compact(self) -> None: ...

    async def undo_plan(self) -> RestorePlan | None:
        """What /undo would put back: the files of the last turn that changed some."""
        ...

    async def rewind_plans(self) -> list[RestorePlan]:
        """One plan per prompt still in the conversation, oldest first."""
        ...

    async def restore_files(self, turn: int) -> tuple[str, ...]:
        """Put files back as they were before turn `turn`; returns those restored. Only idle."""
        ...

    async def rewind_conversation(self, turn: int) -> None:
        """Log that the conversation goes back to before turn `turn`; reopen the session to see
        it (the kernel's history only grows). Only idle."""
        ...

    async def settled(self) -> None: ...

    def mcp_servers(self) -> tuple[McpServerInfo, ...]:
        """The MCP servers' states now (`McpServersChanged` events follow every change)."""
        ...

    async def mcp_started(self) -> None:
        """Resolves when every MCP server is up or has failed (each within its start-up time)."""
        ...

    async def reconnect_mcp(self, name: str) -> bool:
        """Restart one MCP server; False when no server has that name."""
        ...

    async def close(self) -> None: ...
