"""The loop while it is still being opened: lets the app draw its first frame at once.

Building the loop (configuration, session, provider, tools, kernel) imports most of the
package; the app starts on an `OpeningLoop` instead, opens the real loop in the background and
attaches it when ready. Commands given in between wait for the real loop and then go to it, so
a prompt typed at once is not lost; views show an idle, empty loop.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from tui_agent.loop.snapshot import LoopSnapshot

if TYPE_CHECKING:
    from tui_agent.loop.api import (
        ApprovalDecision,
        LoopApi,
        LoopInfo,
        PermissionRule,
        PromptHandle,
        RestorePlan,
        SubagentRun,
    )
    from tui_agent.loop.costs import CostReport
    from tui_agent.loop.elicitation import Elicit
    from tui_agent.loop.events import LoopEvent, McpServerInfo
    from tui_agent.loop.mcp_offers import McpOffers
    from tui_agent.loop.session_tree import SessionTree
    from tui_agent.loop.userhooks import HookInfo
    from tui_agent.vocab import (
        ApprovalMode,
        HistoryEntry,
        ImagePart,
        LLMRequest,
        PromptDraft,
        RuleScope,
        ToolStatus,
    )


async def import_off_loop(*modules: str) -> None:
    """Import `modules` in a worker thread: an import on the event loop (the loop's types and
    the tools load pydantic models, a few hundred ms) holds every key typed meanwhile, while a
    thread lets the loop in at every switch interval."""

    def load() -> None:
        for module in modules:
            importlib.import_module(module)

    await asyncio.to_thread(load)


class OpeningLoop:
    def __init__(self, info: LoopInfo, opener: Callable[[], Awaitable[LoopApi]]) -> None:
        self._info = info
        self._opener = opener
        self._attached: asyncio.Future[LoopApi] | None = None
        self._approval_mode: ApprovalMode | None = None
        self._elicit: Elicit | None = None

    async def open(self) -> LoopApi:
        """Open the real loop (errors propagate: the caller reports them)."""
        return await self._opener()

    def attached(self, loop: LoopApi) -> None:
        """The app now listens to `loop`: release the commands that waited for it."""
        if self._approval_mode is not None:
            loop.set_approval_mode(self._approval_mode)
        if self._elicit is not None:
            loop.answer_elicitations(self._elicit)
        self._ready().set_result(loop)

    def _ready(self) -> asyncio.Future[LoopApi]:
        if self._attached is None:
            self._attached = asyncio.get_running_loop().create_future()
        return self._attached

    async def _real(self) -> LoopApi:
        return await asyncio.shield(self._ready())

    # -- views: an idle, empty loop ------------------------------------------------------------
    @property
    def info(self) -> LoopInfo:
        return self._info

    def history(self) -> list[HistoryEntry]:
        return []

    def transcript(self) -> tuple[LoopEvent, ...]:
        return ()

    def snapshot(self) -> LoopSnapshot:
        return LoopSnapshot("starting", None, None, 0, paused=False)

    def subagent(self, call_id: str) -> SubagentRun | None:
        return None

    def costs(self) -> CostReport | None:
        return None

    def next_request(self) -> LLMRequest | None:
        return None

    def mcp_servers(self) -> tuple[McpServerInfo, ...]:
        return ()

    def hooks(self) -> tuple[HookInfo, ...]:
        return ()

    def mcp_offers(self) -> McpOffers:
        from tui_agent.loop.mcp_offers import NO_OFFERS  # asked for after the first frame

        return NO_OFFERS

    def subscribe(self, callback: Callable[[LoopEvent], None]) -> Callable[[], None]:
        return lambda: None

    async def events(self) -> AsyncIterator[LoopEvent]:
        async for event in (await self._real()).events():
            yield event

    # -- commands: forwarded once the real loop is attached ------------------------------------
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
        real = await self._real()
        return await real.submit(
            text,
            steer_if_active=steer_if_active,
            draft=draft,
            images=images,
            allowed_tools=allowed_tools,
            model=model,
        )

    async def steer(self, prompt_ids: list[str]) -> bool:
        return await (await self._real()).steer(prompt_ids)

    async def cancel(self, prompt_id: str | None = None, *, force: bool = False) -> bool:
        if self._attached is None or not self._attached.done():
            return False  # nothing runs yet
        return await self._attached.result().cancel(prompt_id, force=force)

    async def cancel_tool(self, call_id: str) -> bool:
        return await (await self._real()).cancel_tool(call_id)

    async def edit_queued(self, prompt_id: str, text: str) -> bool:
        return await (await self._real()).edit_queued(prompt_id, text)

    async def move_queued(self, prompt_id: str, offset: int) -> bool:
        return await (await self._real()).move_queued(prompt_id, offset)

    async def notify(self, text: str) -> None:
        await (await self._real()).notify(text)

    async def remind(self, key: str, text: str) -> None:
        await (await self._real()).remind(key, text)

    async def answer_approval(
        self,
        request_id: str,
        decision: ApprovalDecision,
        reason: str | None = None,
        *,
        keep: RuleScope = "session",
        mode: ApprovalMode | None = None,
    ) -> None:
        loop = await self._real()
        await loop.answer_approval(request_id, decision, reason, keep=keep, mode=mode)

    def permission_rules(self) -> tuple[PermissionRule, ...]:
        if self._attached is None or not self._attached.done():
            return ()  # none are read yet
        return self._attached.result().permission_rules()

    def remove_permission_rule(self, rule: PermissionRule) -> str | None:
        if self._attached is None or not self._attached.done():
            return "the session is still opening"
        return self._attached.result().remove_permission_rule(rule)

    def set_approval_mode(self, mode: ApprovalMode) -> None:
        if self._attached is not None and self._attached.done():
            self._attached.result().set_approval_mode(mode)
        else:
            self._approval_mode = mode

    async def compact(self) -> None:
        await (await self._real()).compact()

    async def record_user_command(self, command: str, output: str, status: ToolStatus) -> None:
        await (await self._real()).record_user_command(command, output, status)

    async def undo_plan(self) -> RestorePlan | None:
        return await (await self._real()).undo_plan()

    async def rewind_plans(self) -> list[RestorePlan]:
        return await (await self._real()).rewind_plans()

    async def restore_files(self, turn: int) -> tuple[str, ...]:
        return await (await self._real()).restore_files(turn)

    async def rewind_conversation(self, turn: int) -> None:
        await (await self._real()).rewind_conversation(turn)

    async def session_tree(self) -> SessionTree:
        return await (await self._real()).session_tree()

    async def switch_plan(self, turn: int) -> RestorePlan:
        return await (await self._real()).switch_plan(turn)

    async def switch_branch(self, turn: int, *, files: bool) -> tuple[str, ...]:
        return await (await self._real()).switch_branch(turn, files=files)

    async def settled(self) -> None:
        await (await self._real()).settled()

    async def mcp_started(self) -> None:
        await (await self._real()).mcp_started()

    async def reconnect_mcp(self, name: str) -> bool:
        return await (await self._real()).reconnect_mcp(name)

    async def login_mcp(self, name: str) -> str | None:
        return await (await self._real()).login_mcp(name)

    async def logout_mcp(self, name: str) -> str | None:
        return await (await self._real()).logout_mcp(name)

    def answer_elicitations(self, elicit: Elicit) -> None:
        self._elicit = elicit  # given to the real loop when it is attached

    async def close(self) -> None:
        """Closing before the real loop arrived: the app closes the real one itself."""
