"""The loop's public surface, as the UI and the command line see it.

`AgentLoopService` (in `service.py`) implements `LoopApi`. Observers call `subscribe` to get
every `LoopEvent` in order, and `snapshot()` for the current picture; commands are async
and return quickly (they queue work on the machines; they never wait for a turn).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop.events import LoopEvent, McpServerInfo, TurnResult
from tui_agent.loop.info import LoopInfo as LoopInfo  # re-exported: the surface names it
from tui_agent.vocab import (
    ApprovalMode,
    HistoryEntry,
    ImagePart,
    LLMRequest,
    PromptDraft,
    RuleScope,
    TokenUsage,
    ToolStatus,
)

if TYPE_CHECKING:
    from tui_agent.loop.costs import CostReport
    from tui_agent.loop.elicitation import Elicit
    from tui_agent.loop.mcp_offers import McpOffers
    from tui_agent.loop.session_tree import SessionTree
    from tui_agent.loop.snapshot import LoopSnapshot
    from tui_agent.loop.userhooks import HookInfo


@dataclass(frozen=True)
class RestorePlan:
    """What going back to just before turn `turn` (counted from 0 in the log) would do.

    Here rather than beside the checkpoints that compute it: the app names it before its first
    frame, and the checkpoints module imports the tools."""

    turn: int
    prompt: str  # the text that opened the turn, as the model read it
    draft: PromptDraft | None  # what the person typed, when recorded (what a rewind puts back)
    files: tuple[str, ...]  # files whose content would change
    shell: tuple[str, ...]  # shell commands run since, whose effects stay
    changed_outside: tuple[str, ...]  # of `files`: changed by someone else since the agent


SubagentState = Literal["starting", "running", "completed", "failed", "cancelled"]


@dataclass
class SubagentRun:
    """What the parent knows of one child, by the `task` call's id (the `task` tool in
    `subagent.py` fills it in). Here, beside `LoopApi.subagent` that returns it, so that the
    surface and the tool that implements it never import each other."""

    call_id: str
    description: str
    log_path: Path
    state: SubagentState = "starting"
    current_tool: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float | None = None  # the child's spend, as its last `usage` event said
    loop: LoopApi | None = None  # while the child runs
    transcript: tuple[LoopEvent, ...] = ()  # once it is done: what it showed (replay)
    events: list[LoopEvent] = field(default_factory=list)  # the child's, while it runs
    _watchers: list[Callable[[LoopEvent], None]] = field(default_factory=list)

    def watch(self, callback: Callable[[LoopEvent], None]) -> Callable[[], None]:
        """Call `callback` with each further event of the child (after reading `events`)."""
        self._watchers.append(callback)
        return lambda: self._watchers.remove(callback) if callback in self._watchers else None

    def record(self, event: LoopEvent) -> None:
        self.events.append(event)
        for watcher in tuple(self._watchers):
            watcher(event)


class ModelRefused(ValueError):
    """A prompt's model cannot be used (`LoopApi.submit(model=)`); the message says why.
    Nothing was queued."""


ApprovalDecision = Literal["once", "always", "deny"]
PromptState = Literal[
    "pending", "running", "steered", "completed", "failed", "cancelled", "blocked"
]


@dataclass(frozen=True)
class PermissionRule:
    """One permission rule as `/permissions` lists it."""

    effect: Literal["allow", "ask", "deny"]
    text: str
    source: str  # the file it came from, or "this session"
    active: bool  # False: a project's allow rule the person has not trusted


class PromptHandle(Protocol):
    """One submitted prompt. It settles once, with the result of the turn that answered it."""

    @property
    def id(self) -> str:
        """The prompt id (`p1`, `p2`, ...) that events and queue commands name."""
        ...

    @property
    def state(self) -> PromptState:
        """pending (queued) -> running (in a turn's history) or steered (waiting to join the
        running turn at its next drain point) -> completed | failed | cancelled | blocked."""
        ...

    async def result(self) -> TurnResult:
        """The result of the turn that answered this prompt (a steer shares its turn's)."""
        ...


class LoopApi(Protocol):
    @property
    def info(self) -> LoopInfo:
        """What runs: provider, model, context window, approval mode, session, workspace."""
        ...

    def history(self) -> list[HistoryEntry]:
        """The conversation as the model sees it (compaction applied), oldest first."""
        ...

    def transcript(self) -> Sequence[LoopEvent]:
        """The events that drew this session before it was opened (empty for a new one):
        replayed, they rebuild the screen as it was (see `loop.replay`)."""
        ...

    def snapshot(self) -> LoopSnapshot:
        """The current picture: machine states, queue, pending notifications, live tools."""
        ...

    def costs(self) -> CostReport | None:
        """What the session, this turn, each sub-agent and the dearest tool calls cost (None
        while the loop is still being opened)."""
        ...

    def next_request(self) -> LLMRequest | None:
        """The request the next step would send as things stand (what `/context` pictures);
        None while the loop is still being opened."""
        ...

    def subagent(self, call_id: str) -> SubagentRun | None:
        """The sub-agent that the `task` call `call_id` started, live or done."""
        ...

    def subscribe(self, callback: Callable[[LoopEvent], None]) -> Callable[[], None]:
        """Call `callback` for every event from now on; returns an unsubscribe function."""
        ...

    def events(self) -> AsyncIterator[LoopEvent]:
        """The same events as `subscribe`, as an async iterator (for scripts and tests)."""
        ...

    async def submit(
        self,
        text: str,
        *,
        steer_if_active: bool = False,
        draft: PromptDraft | None = None,
        images: Sequence[ImagePart] = (),
        allowed_tools: Sequence[str] | None = None,
        model: str | None = None,
    ) -> PromptHandle:
        """Queue a prompt; it opens the next turn, or with `steer_if_active` joins the running
        one at its next drain point (the turn then takes at least one more step). `draft` is
        what the person typed, when `text` is more (attached files, pasted text): the log keeps
        it for a rewind to put back. `images` follow the text in the same user message.
        `allowed_tools` (a custom command's, as permission rules): the turn this prompt opens
        may use only those tools (`Approvals.limit_turn`). `model` (a custom command's): the
        turn this prompt opens runs on that model (resolved as `/model` resolves a name; see
        `loop.turn_model`), the turns after it on the session's; a name that cannot be used
        raises `ModelRefused` and nothing is queued."""
        ...

    async def steer(self, prompt_ids: list[str]) -> bool:
        """Move queued prompts into the running turn, merged into one user message; False when
        no turn runs or none of them is queued."""
        ...

    async def cancel(self, prompt_id: str | None = None, *, force: bool = False) -> bool:
        """No id: cancel the active turn (`force` ends it at once). An id: drop a queued prompt."""
        ...

    async def cancel_tool(self, call_id: str) -> bool:
        """Stop one running (or queued) tool call; the turn goes on with its aborted result."""
        ...

    async def edit_queued(self, prompt_id: str, text: str) -> bool:
        """Replace the text of a queued prompt; False when it is no longer queued."""
        ...

    async def move_queued(self, prompt_id: str, offset: int) -> bool:
        """Move a queued prompt `offset` places (negative: earlier); False when nothing moved."""
        ...

    async def notify(self, text: str) -> None:
        """Add a user-visible note to the history at the next drain point (or turn start)."""
        ...

    async def remind(self, key: str, text: str) -> None:
        """Set the reminder `key` (one per key, the latest wins), injected at the next drain
        point of a running turn."""
        ...

    async def answer_approval(
        self,
        request_id: str,
        decision: ApprovalDecision,
        reason: str | None = None,
        *,
        keep: RuleScope = "session",
        mode: ApprovalMode | None = None,
    ) -> None:
        """Answer an `approval.requested` event: once, always (the rule, kept for this
        session, this project or everywhere: `keep`), or deny with a reason the model reads.
        A plan (`kind == "plan"`): "once" accepts it and continues in `mode`; "deny" keeps
        planning, with the reason as feedback."""
        ...

    def set_approval_mode(self, mode: ApprovalMode) -> None:
        """Switch between plan, ask, auto-edit and yolo for the calls that come next."""
        ...

    def permission_rules(self) -> tuple[PermissionRule, ...]:
        """The permission rules in force (and the project's not yet trusted), in order."""
        ...

    def remove_permission_rule(self, rule: PermissionRule) -> str | None:
        """Drop a rule for this session and from the file it came from when it can be written;
        returns a problem to show, or None."""
        ...

    async def compact(self) -> None:
        """Summarise the history now; a `compacted` event or a notice says how it went."""
        ...

    async def record_user_command(self, command: str, output: str, status: ToolStatus) -> None:
        """Log a `!command` the user ran, as its row showed it (a resumed transcript and an
        export show it again; its output reaches the model with the next prompt)."""
        ...

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

    async def session_tree(self) -> SessionTree:
        """The turns of this session as a tree of branches, each turn priced."""
        ...

    async def switch_plan(self, turn: int) -> RestorePlan:
        """What moving to the end of turn `turn` (on any branch) would do to the files."""
        ...

    async def switch_branch(self, turn: int, *, files: bool) -> tuple[str, ...]:
        """Log that the conversation moves to the end of turn `turn` and, with `files`, put
        the workspace files back as they were there; returns those restored. Reopen the
        session to see it. Only idle; `RestoreRefused` (nothing moved) when a file may not
        be put back."""
        ...

    async def settled(self) -> None:
        """Resolves when no turn runs, nothing would start one and every event is delivered."""
        ...

    def mcp_servers(self) -> tuple[McpServerInfo, ...]:
        """The MCP servers' states now (`McpServersChanged` events follow every change)."""
        ...

    def hooks(self) -> tuple[HookInfo, ...]:
        """The configured hook commands (a project's untrusted ones too) and their last runs."""
        ...

    async def mcp_started(self) -> None:
        """Resolves when every MCP server is up or has failed (each within its start-up time)."""
        ...

    async def reconnect_mcp(self, name: str) -> bool:
        """Restart one MCP server; False when no server has that name."""
        ...

    def mcp_offers(self) -> McpOffers:
        """The MCP servers' prompts and resources, as they last listed them."""
        ...

    async def login_mcp(self, name: str) -> str | None:
        """Log in to an OAuth MCP server (opens the browser) and connect it; None when done,
        else what went wrong."""
        ...

    async def logout_mcp(self, name: str) -> str | None:
        """Forget an OAuth MCP server's tokens and disconnect it; None when done."""
        ...

    def answer_elicitations(self, elicit: Elicit) -> None:
        """Who answers MCP servers' requests for input (unset: each is declined, with a notice)."""
        ...

    async def close(self) -> None:
        """Cancel what runs, stop the tools, flush the session log; idempotent."""
        ...
