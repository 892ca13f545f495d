"""Loop events: what observers (the UI, `--output-format jsonl`) see of the running loop.

Tagged by a stable `type` string, with `ts` (unix seconds). These are the loop's public words:
observers never see kernel emissions or provider details, only these and `LoopSnapshot`.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tui_agent.vocab import (
    ApprovalMode,
    FileChange,
    PlanItem,
    TokenUsage,
    ToolStatus,
    tool_status,
)


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    ts: float = Field(default_factory=time.time)


class PromptQueued(_Event):
    type: Literal["prompt.queued"] = "prompt.queued"
    prompt_id: str
    text: str


class PromptRemoved(_Event):
    """A queued prompt left the queue without running (cancelled, steered, blocked)."""

    type: Literal["prompt.removed"] = "prompt.removed"
    prompt_id: str
    reason: Literal["cancelled", "steered", "blocked", "failed", "edited"]


class PromptSteered(_Event):
    type: Literal["prompt.steered"] = "prompt.steered"
    prompt_ids: tuple[str, ...]
    text: str


class NotificationQueued(_Event):
    type: Literal["notification.queued"] = "notification.queued"
    source: Literal["notify", "reminder", "async-tool", "steer"]
    text: str
    key: str | None = None


class TurnStarted(_Event):
    type: Literal["turn.started"] = "turn.started"
    turn_id: int
    prompt_ids: tuple[str, ...]
    texts: tuple[str, ...]  # the user-visible inputs that opened the turn, in order
    model: str | None = None  # the model it runs on, when its prompts asked for another


class StepStarted(_Event):
    type: Literal["step.started"] = "step.started"
    turn_id: int
    step: int


class AssistantDelta(_Event):
    type: Literal["assistant.delta"] = "assistant.delta"
    turn_id: int
    step: int
    text: str


class ThinkingDelta(_Event):
    type: Literal["thinking.delta"] = "thinking.delta"
    turn_id: int
    step: int
    text: str


class AttemptDiscarded(_Event):
    """The partial output of the current attempt must be removed from the screen."""

    type: Literal["attempt.discarded"] = "attempt.discarded"
    turn_id: int
    step: int


class Retrying(_Event):
    type: Literal["retrying"] = "retrying"
    turn_id: int
    step: int
    attempt: int  # the attempt that comes next
    max_attempts: int
    delay_s: float
    error_code: str
    message: str
    status: int | None = None  # the HTTP status of the failed attempt, when it had one


class StepCompleted(_Event):
    type: Literal["step.completed"] = "step.completed"
    turn_id: int
    step: int
    text: str
    thinking: str
    finish_reason: str | None
    usage: TokenUsage | None


class ToolStarted(_Event):
    type: Literal["tool.started"] = "tool.started"
    id: str
    name: str
    arguments: str


class ToolStateChanged(_Event):
    type: Literal["tool.state"] = "tool.state"
    id: str
    name: str
    # queued | awaiting_approval | running | detached, then the final `ToolStatus`
    state: str


class ToolUpdated(_Event):
    type: Literal["tool.updated"] = "tool.updated"
    id: str
    text: str


ToolOutcome = Literal["succeeded", "failed", "aborted"]  # the tool machine's final state


class ToolFinished(_Event):
    """A call ended. `status` is what every view shows; `outcome` (the tool machine's final
    state) and `is_error` stay for older readers of `--output-format jsonl`."""

    type: Literal["tool.finished"] = "tool.finished"
    id: str
    name: str
    outcome: ToolOutcome
    output: str
    is_error: bool
    display: dict[str, Any] | None = None
    background: bool = False
    status: ToolStatus = "done"  # always derived from the fields above (see `_derive_status`)

    @model_validator(mode="before")
    @classmethod
    def _derive_status(cls, data: Any) -> Any:
        """The status is never given, only derived by the one rule (a status read back from
        jsonl is derived again, so it cannot disagree with the fields it came from)."""
        if not isinstance(data, dict):
            return data
        status = tool_status(
            is_error=bool(data.get("is_error")),
            display=data.get("display"),
            outcome=data.get("outcome"),
        )
        return {**data, "status": status}


class ApprovalRequested(_Event):
    type: Literal["approval.requested"] = "approval.requested"
    request_id: str
    call_id: str
    name: str
    summary: str  # one line: the shell command, or the file
    rule: str  # what "always" would allow, e.g. "shell(git status:*)" ("": nothing)
    preview: str = ""  # a unified diff for edits and writes, the command for shell, the plan
    kind: Literal["tool", "plan", "trust"] = "tool"  # a call, a plan to accept, a project's files
    rules: tuple[str, ...] = ()  # the rules "always" adds (`rule` shows them joined)
    sandboxed: bool | None = None  # a command: whether it would run inside the sandbox
    why: str = ""  # why it asks when the mode alone would not (a rule, leaving the sandbox)
    change: FileChange | None = None  # an edit's or write's file, whole, before and after


class ApprovalResolved(_Event):
    type: Literal["approval.resolved"] = "approval.resolved"
    request_id: str
    call_id: str
    decision: Literal["once", "always", "deny"]


class ModeChanged(_Event):
    """The approval mode changed (Shift+Tab, /approval, an ACP client, an accepted plan)."""

    type: Literal["mode.changed"] = "mode.changed"
    mode: ApprovalMode


class PlanProposed(_Event):
    """The model presented its plan (`exit_plan_mode`) in plan mode."""

    type: Literal["plan.proposed"] = "plan.proposed"
    call_id: str
    plan: str


class Drained(_Event):
    """Inputs entered the running turn's history at a drain point (before its next step)."""

    type: Literal["drained"] = "drained"
    turn_id: int
    texts: tuple[str, ...]
    prompt_ids: tuple[str, ...] = ()  # the steered prompts among them, now in history


class Compacted(_Event):
    type: Literal["compacted"] = "compacted"
    summary: str
    tokens_before: int
    tokens_after: int


class TurnAborting(_Event):
    type: Literal["turn.aborting"] = "turn.aborting"
    turn_id: int
    reason: str


class UsageChanged(_Event):
    type: Literal["usage"] = "usage"
    total: TokenUsage
    context_tokens: int
    context_window: int
    cost_usd: float | None = None  # `total`'s price in USD; None: no price known (or not said)
    model: str | None = None  # the model that served the tokens added, when not the session's


class CostedUsage(TokenUsage):
    """Tokens with their price (`loop.costs`); `cost_usd` None: the model has no price."""

    cost_usd: float | None = None


class MachineTransition(_Event):
    type: Literal["machine.transition"] = "machine.transition"
    machine: str
    machine_id: str
    event: str
    source: str
    target: str


class TurnResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    type: Literal["completed", "failed", "cancelled"]
    steps: int
    truncated: bool = False
    stop_reason: str | None = None
    reason: str | None = None  # cancelled: why
    error: dict[str, Any] | None = None  # failed: {code, message}

    def marker(self) -> tuple[Literal["interrupted", "error", "stopped"], str] | None:
        """The line a transcript ends the turn with, if any (a plain completion says nothing)."""
        if self.type == "cancelled":
            # The user's own cancel needs no explanation; anything else (closing...) says why.
            own = self.reason in (None, "user_cancelled")
            return "interrupted", "interrupted" if own else f"interrupted ({self.reason})"
        if self.type == "failed":
            error = self.error or {}
            code = error.get("code", "error")
            message = error.get("message") or ""
            return "error", f"turn failed: {code}: {message}".rstrip(": ")
        if self.truncated:
            return "stopped", f"stopped: {self.stop_reason or 'output limit'}"
        return None


class TurnFinished(_Event):
    type: Literal["turn.finished"] = "turn.finished"
    turn_id: int
    text: str  # the final assistant text, whole
    result: TurnResult
    usage: CostedUsage | None = None  # this turn's requests (its sub-agents' included)


class PlanUpdated(_Event):
    """The model replaced the session's plan (`todo_write`); `todos` is the whole new plan."""

    type: Literal["plan.updated"] = "plan.updated"
    todos: tuple[PlanItem, ...]


class Notice(_Event):
    """Something the user should read that is not part of the conversation."""

    type: Literal["notice"] = "notice"
    level: Literal["info", "warning", "error"]
    text: str


class McpServerInfo(BaseModel):
    """One MCP server as `/mcp` shows it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    source: str  # "config" (config.toml) | "workspace" (.mcp.json) | "client" (ACP)
    state: str  # off | skipped | waiting | starting | ready | failed | crashed | disabled | login
    command: str  # the command line or URL
    tools: tuple[str, ...] = ()
    error: str | None = None
    auth: str | None = None  # OAuth servers: "logged in (…)" or "not logged in"


class McpServersChanged(_Event):
    """The MCP servers' states, all of them, whenever one changes."""

    type: Literal["mcp.servers"] = "mcp.servers"
    servers: tuple[McpServerInfo, ...]


LoopEvent = Annotated[
    PromptQueued
    | PromptRemoved
    | PromptSteered
    | NotificationQueued
    | TurnStarted
    | StepStarted
    | AssistantDelta
    | ThinkingDelta
    | AttemptDiscarded
    | Retrying
    | StepCompleted
    | ToolStarted
    | ToolStateChanged
    | ToolUpdated
    | ToolFinished
    | ApprovalRequested
    | ApprovalResolved
    | ModeChanged
    | PlanProposed
    | Drained
    | Compacted
    | TurnAborting
    | UsageChanged
    | MachineTransition
    | TurnFinished
    | PlanUpdated
    | Notice
    | McpServersChanged,
    Field(discriminator="type"),
]
