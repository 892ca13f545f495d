"""A stand-in `LoopApi` for UI tests: records every command and lets a test emit loop events.

Used where a test needs a state frozen at one point (snapshots: mid-stream, retry countdown) or
needs to see exactly which loop call a key made; flows that need real behaviour use the real
service driven by the scripted provider (`tests/support/loops.py`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tui_agent.loop.api import (
    ApprovalDecision,
    LoopInfo,
    PermissionRule,
    PromptState,
    RestorePlan,
)
from tui_agent.loop.costs import CostReport
from tui_agent.loop.elicitation import Elicit
from tui_agent.loop.events import LoopEvent, McpServerInfo, TurnResult
from tui_agent.loop.mcp_offers import NO_OFFERS, McpOffers
from tui_agent.loop.snapshot import LoopSnapshot
from tui_agent.loop.userhooks import HookInfo
from tui_agent.vocab import (
    ApprovalMode,
    HistoryEntry,
    ImagePart,
    LLMRequest,
    PromptDraft,
    RuleScope,
)

# A real, empty folder at a fixed path: the app lists the workspace (for @ completion), and the
# welcome block shows the path, so it must exist and read the same in every run.
WORKSPACE = Path("/tmp/tui-agent-scene/project")
WORKSPACE.mkdir(parents=True, exist_ok=True)

INFO = LoopInfo(
    provider="scripted",
    model="demo-model",
    context_window=200_000,
    approval_mode="ask",
    session_id="s-20261129-demo",
    workspace=str(WORKSPACE),
    demo=True,
)


@dataclass
class FakeHandle:
    id: str
    state: PromptState = "pending"

    async def result(self) -> TurnResult:
        return TurnResult(type="completed", steps=1)


@dataclass
class FakeLoop:
    info: LoopInfo = INFO
    entries: list[HistoryEntry] = field(default_factory=list)
    replayed: list[LoopEvent] = field(default_factory=list)
    plans: list[RestorePlan] = field(default_factory=list)
    snap: LoopSnapshot = field(
        default_factory=lambda: LoopSnapshot("idle", None, None, 0, paused=False)
    )
    calls: list[tuple[str, Any]] = field(default_factory=list)
    images: list[tuple[ImagePart, ...]] = field(default_factory=list)  # per submit, in order
    closed: bool = False
    mcp: tuple[McpServerInfo, ...] = ()
    hook_infos: tuple[HookInfo, ...] = ()
    offers: McpOffers = NO_OFFERS
    rules: tuple[PermissionRule, ...] = ()
    answer_options: list[tuple[RuleScope, ApprovalMode | None]] = field(default_factory=list)
    cost_report: CostReport | None = None
    request: LLMRequest | None = None
    elicit: Elicit | None = None  # what the app answers MCP servers' questions with
    _subscribers: list[Callable[[LoopEvent], None]] = field(default_factory=list)
    _next: int = 0

    def emit(self, *events: LoopEvent) -> None:
        for event in events:
            for callback in tuple(self._subscribers):
                callback(event)

    def history(self) -> list[HistoryEntry]:
        return list(self.entries)

    def transcript(self) -> list[LoopEvent]:
        return list(self.replayed)

    def snapshot(self) -> LoopSnapshot:
        return self.snap

    def subscribe(self, callback: Callable[[LoopEvent], None]) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    async def events(self) -> AsyncIterator[LoopEvent]:
        raise NotImplementedError("the UI subscribes; it never iterates events")
        yield  # pragma: no cover

    async def submit(
        self,
        text: str,
        *,
        steer_if_active: bool = False,
        draft: PromptDraft | None = None,
        images: Sequence[ImagePart] = (),
        allowed_tools: Sequence[str] | None = None,
        model: str | None = None,
    ) -> FakeHandle:
        self._next += 1
        self.calls.append(("submit", (text, steer_if_active)))
        self.images.append(tuple(images))
        return FakeHandle(f"p{self._next}")

    async def steer(self, prompt_ids: list[str]) -> bool:
        self.calls.append(("steer", prompt_ids))
        return True

    async def cancel(self, prompt_id: str | None = None, *, force: bool = False) -> bool:
        self.calls.append(("cancel", (prompt_id, force)))
        return True

    async def cancel_tool(self, call_id: str) -> bool:
        self.calls.append(("cancel_tool", call_id))
        return True

    async def edit_queued(self, prompt_id: str, text: str) -> bool:
        self.calls.append(("edit_queued", (prompt_id, text)))
        return True

    async def move_queued(self, prompt_id: str, offset: int) -> bool:
        self.calls.append(("move_queued", (prompt_id, offset)))
        return True

    async def notify(self, text: str) -> None:
        self.calls.append(("notify", text))

    async def remind(self, key: str, text: str) -> None:
        self.calls.append(("remind", (key, text)))

    async def answer_approval(
        self,
        request_id: str,
        decision: ApprovalDecision,
        reason: str | None = None,
        *,
        keep: RuleScope = "session",
        mode: ApprovalMode | None = None,
    ) -> None:
        self.calls.append(("answer_approval", (request_id, decision, reason)))
        self.answer_options.append((keep, mode))

    def permission_rules(self) -> tuple[PermissionRule, ...]:
        return self.rules

    def remove_permission_rule(self, rule: PermissionRule) -> str | None:
        self.calls.append(("remove_permission_rule", rule.text))
        self.rules = tuple(r for r in self.rules if r != rule)
        return None

    def set_approval_mode(self, mode: ApprovalMode) -> None:
        self.calls.append(("set_approval_mode", mode))
        self.info = replace(self.info, approval_mode=mode)

    async def compact(self) -> None:
        self.calls.append(("compact", None))

    async def record_user_command(self, command: str, output: str, status: str) -> None:
        self.calls.append(("user_command", (command, output, status)))

    async def undo_plan(self) -> RestorePlan | None:
        return self.plans[-1] if self.plans else None

    async def rewind_plans(self) -> list[RestorePlan]:
        return list(self.plans)

    async def restore_files(self, turn: int) -> tuple[str, ...]:
        self.calls.append(("restore_files", turn))
        return ()

    async def rewind_conversation(self, turn: int) -> None:
        self.calls.append(("rewind_conversation", turn))

    async def settled(self) -> None:
        return None

    def mcp_servers(self) -> tuple[McpServerInfo, ...]:
        return self.mcp

    def hooks(self) -> tuple[HookInfo, ...]:
        return self.hook_infos

    def mcp_offers(self) -> McpOffers:
        return self.offers

    def costs(self) -> CostReport | None:
        return self.cost_report

    def next_request(self) -> LLMRequest | None:
        return self.request

    async def mcp_started(self) -> None:
        return None

    async def reconnect_mcp(self, name: str) -> bool:
        self.calls.append(("reconnect_mcp", name))
        return any(server.name == name for server in self.mcp)

    async def login_mcp(self, name: str) -> str | None:
        self.calls.append(("login_mcp", name))
        return None

    async def logout_mcp(self, name: str) -> str | None:
        self.calls.append(("logout_mcp", name))
        return None

    def answer_elicitations(self, elicit: Elicit) -> None:
        self.elicit = elicit

    async def close(self) -> None:
        self.closed = True
        self.calls.append(("close", None))
