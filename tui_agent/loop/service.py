"""AgentLoopService: the loop the UI and the command line drive (docs/loop-spec.md §5).

It is the public `LoopApi`: views (history, snapshot, plan, usage), commands that queue work
on the machines (submit, steer, cancel, queue edits, notes, approvals, compaction, checkpoints,
MCP servers) and the three ordered hook slots with the error-handler chain for registration.
Every collaborator arrives at construction (`factory.build_loop` wires them in dependency
order). What the engine calls back — the step gate, turn and prompt bookkeeping, the tool side
channel, the error handlers' `retry()`, settling — and the commands that change its state
(submit, steer, cancel, close, applying a compaction) are the private `TurnPolicy`'s in
`_policy.py`, which this class delegates to; it writes none of the policy's fields itself. The
kernel is reached only through `loop.adapters` (`Engine`'s commands and views).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Literal

from tui_agent.context import CompactionFailed, CompactionResult, UserCommand
from tui_agent.loop import events as ev
from tui_agent.loop import transcript
from tui_agent.loop._policy import TurnPolicy
from tui_agent.loop._turn import SubmittedPrompt
from tui_agent.loop.adapters.engine import Engine, KernelOptions
from tui_agent.loop.adapters.journal import Journal
from tui_agent.loop.adapters.tools import USER_STOPPED_CALL
from tui_agent.loop.api import ApprovalDecision, LoopInfo, PermissionRule, RestorePlan, SubagentRun
from tui_agent.loop.checkpoints import Checkpoints
from tui_agent.loop.costs import CostReport
from tui_agent.loop.hooks import CompactContext, Disposable, OrderedHookSlot, StopContext
from tui_agent.loop.hooks import ErrorContext as ErrorContext
from tui_agent.loop.hooks import LoopErrorHandler as LoopErrorHandler
from tui_agent.loop.hooks import PromptContext as PromptContext
from tui_agent.loop.hooks import StepBeginContext as StepBeginContext
from tui_agent.loop.hooks import StepDoneContext as StepDoneContext
from tui_agent.loop.subagent import Subagents, machine_prefix
from tui_agent.tools import Approvals, Decision, Rule
from tui_agent.vocab import (
    ApprovalMode,
    EntryMeta,
    HistoryEntry,
    ImagePart,
    LLMError,
    LLMErrorKind,
    LLMRequest,
    PlanItem,
    PromptDraft,
    RuleScope,
    ToolStatus,
    TurnError,
    user_message,
)

if TYPE_CHECKING:
    from tui_agent.loop.elicitation import Elicit
    from tui_agent.loop.mcp_offers import McpOffers
    from tui_agent.loop.session_tree import SessionTree
    from tui_agent.loop.snapshot import LoopSnapshot
    from tui_agent.loop.userhooks import HookInfo, UserHooks
    from tui_agent.tools.mcp import McpServers

Compactor = Callable[[Sequence[HistoryEntry]], Awaitable[CompactionResult | CompactionFailed]]


# The loop's knobs are the kernel's (`max_steps`, retries, abort timings; see
# `kernel/options.py`): one dataclass, so each default has one owner. `build_loop` fills in the
# provider and model from `LoopInfo`.
LoopOptions = KernelOptions


class AgentLoopService:
    """Implements `LoopApi`; wired by `factory.build_loop` (`session.open_loop` for the CLI)."""

    def __init__(
        self,
        *,
        info: LoopInfo,
        engine: Engine,
        policy: TurnPolicy,
        journal: Journal,
        options: LoopOptions = LoopOptions(),
        clock: Callable[[], float] = time.time,
        subagents: Subagents | None = None,
        compactor: Compactor | None = None,
        approvals: Approvals | None = None,
        forget_rule: Callable[[Rule], str | None] = lambda rule: None,
        on_close: Sequence[Callable[[], Awaitable[None]]] = (),
        mcp: McpServers | None = None,
        checkpoints: Checkpoints | None = None,
        transcript: tuple[ev.LoopEvent, ...] = (),
        next_request: Callable[[], LLMRequest] | None = None,
        user_hooks: UserHooks | None = None,
    ) -> None:
        self._info = info
        self._next_request = next_request  # what the next step would send (/context)
        self.engine = engine
        self._policy = policy
        self._journal = journal
        self._options = options
        self._clock = clock
        self._subagents = subagents
        self._compactor = compactor
        self._approvals = approvals
        self._forget_rule = forget_rule  # takes a rule out of its settings file
        if approvals is not None:
            approvals.on_mode_change(self._mode_changed)
        self._close_hooks = tuple(on_close)
        self._mcp = mcp
        self._checkpoints = checkpoints
        self._transcript = transcript  # a resumed session's events so far
        self._user_hooks = user_hooks
        # The hook slots are the policy's: it runs them; callers register here.
        self.on_will_begin_step: OrderedHookSlot[StepBeginContext] = policy.on_will_begin_step
        self.on_did_finish_step: OrderedHookSlot[StepDoneContext] = policy.on_did_finish_step
        self.on_before_submit_prompt: OrderedHookSlot[PromptContext] = (
            policy.on_before_submit_prompt
        )
        self.on_turn_stop: OrderedHookSlot[StopContext] = policy.on_turn_stop
        self.on_before_compact: OrderedHookSlot[CompactContext] = OrderedHookSlot()

    async def start(self) -> None:
        await self.engine.start()

    # -- LoopApi: views ----------------------------------------------------------------------
    @property
    def info(self) -> LoopInfo:
        return self._info

    def history(self) -> list[HistoryEntry]:
        return list(self.view(self.engine.history))

    def transcript(self) -> tuple[ev.LoopEvent, ...]:
        return self._transcript

    def view(self, history: Sequence[HistoryEntry]) -> Sequence[HistoryEntry]:
        """The history the model sees: the kernel's, with a compaction overlay applied."""
        return self._policy.view(history)

    def snapshot(self) -> LoopSnapshot:
        # The views below (snapshot, MCP offers, the session tree, branch switches) load their
        # modules at first use: a one-shot never calls them.
        from tui_agent.loop.snapshot import LoopSnapshot

        engine = self.engine
        return LoopSnapshot(
            agent_state=engine.agent_state,
            turn_state=engine.turn_state,
            active_turn_id=engine.active_turn_id,
            step=engine.step,
            paused=engine.paused,
            queue=self.engine.queue(),
            notifications=self.engine.notifications(),
            tools=self.engine.live_tools(),
            machine_states=self._machine_states(),
            plan=self._policy.plan,
        )

    def _machine_states(self) -> dict[str, str]:
        """This loop's machines, then each running sub-agent's under its task's title."""
        states = self.engine.machine_states()
        for run in self._subagents.live() if self._subagents else ():
            assert run.loop is not None
            for machine, state in run.loop.snapshot().machine_states.items():
                states[f"{machine_prefix(run)}{machine}"] = state
        return states

    def set_plan(self, plan: tuple[PlanItem, ...]) -> None:
        """The model's new plan (from `todo_write`, or the last one of a resumed session)."""
        self._policy.set_plan(plan)

    def costs(self) -> CostReport:
        return self._policy.ledger.report()

    def next_request(self) -> LLMRequest | None:
        return self._next_request() if self._next_request is not None else None

    def subagent(self, call_id: str) -> SubagentRun | None:
        """The sub-agent a `task` call started: live, or done with its history."""
        return self._subagents.get(call_id) if self._subagents else None

    def subscribe(self, callback: Callable[[ev.LoopEvent], None]) -> Callable[[], None]:
        return self._policy.subscribe(callback)

    def _publish(self, event: ev.LoopEvent) -> None:
        self._policy.publish(event)

    async def events(self) -> AsyncIterator[ev.LoopEvent]:
        queue: asyncio.Queue[ev.LoopEvent] = asyncio.Queue()
        remove = self.subscribe(queue.put_nowait)
        try:
            while True:
                yield await queue.get()
        finally:
            remove()

    # -- LoopApi: commands -------------------------------------------------------------------
    async def submit(
        self,
        text: str,
        *,
        steer_if_active: bool = False,
        draft: PromptDraft | None = None,
        images: Sequence[ImagePart] = (),
        allowed_tools: Sequence[str] | None = None,
        model: str | None = None,
    ) -> SubmittedPrompt:
        return await self._policy.submit(
            text,
            steer_if_active=steer_if_active,
            draft=draft,
            images=images,
            allowed_tools=allowed_tools,
            model=model,
        )

    async def steer(self, prompt_ids: list[str]) -> bool:
        return await self._policy.steer(prompt_ids)

    async def cancel(self, prompt_id: str | None = None, *, force: bool = False) -> bool:
        return await self._policy.cancel(prompt_id, force=force)

    async def cancel_tool(self, call_id: str) -> bool:
        self._policy.approvals.deny("The user stopped this call.", call_id=call_id)
        return await self.engine.abort_tool(call_id, USER_STOPPED_CALL)

    async def edit_queued(self, prompt_id: str, text: str) -> bool:
        prompt = self._policy.prompts.get(prompt_id)
        if prompt is None or not await self.engine.edit_queued(prompt_id, user_message(text)):
            return False
        prompt.text = text
        self._publish(ev.PromptRemoved(prompt_id=prompt_id, reason="edited"))
        self._publish(ev.PromptQueued(prompt_id=prompt_id, text=text))
        return True

    async def move_queued(self, prompt_id: str, offset: int) -> bool:
        return await self.engine.move_queued(prompt_id, offset)

    async def notify(self, text: str) -> None:
        entry = HistoryEntry(
            message=user_message(text), meta=EntryMeta(source="notify", created_at=self._clock())
        )
        await self.engine.notify(entry)
        self._publish(ev.NotificationQueued(source="notify", text=text))

    async def remind(self, key: str, text: str) -> None:
        entry = HistoryEntry(
            message=user_message(text),
            meta=EntryMeta(source="reminder", key=key, created_at=self._clock()),
        )
        await self.engine.remind(key, entry)
        self._publish(ev.NotificationQueued(source="reminder", text=text, key=key))

    async def answer_approval(
        self,
        request_id: str,
        decision: ApprovalDecision,
        reason: str | None = None,
        *,
        keep: RuleScope = "session",
        mode: ApprovalMode | None = None,
    ) -> None:
        self._policy.approvals.answer(request_id, Decision(decision, reason, keep, mode))

    def set_approval_mode(self, mode: ApprovalMode) -> None:
        if self._approvals is not None and self._approvals.mode != mode:
            self._approvals.mode = mode  # its listener, `_mode_changed`, tells everyone
        elif mode != self._info.approval_mode:
            self._mode_changed(mode)

    def _mode_changed(self, mode: ApprovalMode) -> None:
        self._info = LoopInfo(**{**self._info.__dict__, "approval_mode": mode})
        self._publish(ev.ModeChanged(mode=mode))
        self._publish(ev.Notice(level="info", text=f"Approval mode: {mode}"))

    async def record_user_command(self, command: str, output: str, status: ToolStatus) -> None:
        self._journal.write(UserCommand(command=command, output=output, status=status))

    def permission_rules(self) -> tuple[PermissionRule, ...]:
        if self._approvals is None:
            return ()
        return tuple(
            PermissionRule(rule.effect, rule.text, rule.source, rule.counts)
            for rule in self._approvals.ruleset.rules
        )

    def remove_permission_rule(self, rule: PermissionRule) -> str | None:
        if self._approvals is None:
            return "no permission rules here"
        ruleset = self._approvals.ruleset
        found = next(
            (
                r
                for r in ruleset.rules
                if (r.effect, r.text, r.source) == (rule.effect, rule.text, rule.source)
            ),
            None,
        )
        if found is None:
            return f'no rule "{rule.text}" from {rule.source}'
        ruleset.remove(found)
        return self._forget_rule(found)

    async def compact(self) -> None:
        if self._compactor is None:
            self._publish(ev.Notice(level="warning", text="Compaction is not available."))
            return
        # A failure says so itself.
        await self.compact_history(self.engine.history, trigger="manual")

    # -- MCP servers ---------------------------------------------------------------------------
    def mcp_servers(self) -> tuple[ev.McpServerInfo, ...]:
        return mcp_server_infos(self._mcp)

    def hooks(self) -> tuple[HookInfo, ...]:
        return self._user_hooks.infos() if self._user_hooks is not None else ()

    async def mcp_started(self) -> None:
        """Resolves when every MCP server is up or has failed (each within its start-up time)."""
        if self._mcp is not None:
            await self._mcp.wait_started()

    async def reconnect_mcp(self, name: str) -> bool:
        return self._mcp is not None and await self._mcp.reconnect(name)

    def mcp_offers(self) -> McpOffers:
        from tui_agent.loop.mcp_offers import NO_OFFERS, ServerOffers

        return NO_OFFERS if self._mcp is None else ServerOffers(self._mcp)

    async def login_mcp(self, name: str) -> str | None:
        if self._mcp is None:
            return "no MCP servers are configured"
        return await self._mcp.login(name)

    async def logout_mcp(self, name: str) -> str | None:
        if self._mcp is None:
            return "no MCP servers are configured"
        return await self._mcp.logout(name)

    def answer_elicitations(self, elicit: Elicit) -> None:
        if self._mcp is not None:
            self._mcp.elicit = elicit

    # -- checkpoints -------------------------------------------------------------------------
    async def undo_plan(self) -> RestorePlan | None:
        checkpoints = self._restorer()
        timeline = await checkpoints.timeline()
        turn = timeline.undo_target()
        return None if turn is None else await checkpoints.plan(timeline, turn)

    async def rewind_plans(self) -> list[RestorePlan]:
        checkpoints = self._restorer()
        timeline = await checkpoints.timeline()
        return [await checkpoints.plan(timeline, turn.number) for turn in timeline.turns]

    async def restore_files(self, turn: int) -> tuple[str, ...]:
        restored = await self._restorer(idle=True).restore(turn)
        self._publish(transcript.files_restored(restored))
        return restored.paths

    async def rewind_conversation(self, turn: int) -> None:
        await self._restorer(idle=True).rewind(turn)

    async def session_tree(self) -> SessionTree:
        from tui_agent.loop.session_tree import SessionTree

        records = await self._restorer().records()
        return SessionTree.of(records).price(self._policy.ledger.metering.pricer_for)

    async def switch_plan(self, turn: int) -> RestorePlan:
        from tui_agent.loop.branches import switch_plan

        return await switch_plan(self._restorer(), turn)

    async def switch_branch(self, turn: int, *, files: bool) -> tuple[str, ...]:
        from tui_agent.loop.branches import switch_branch

        return (await switch_branch(self._restorer(idle=True), turn, files=files)).paths

    def _restorer(self, *, idle: bool = False) -> Checkpoints:
        if self._checkpoints is None:
            raise RuntimeError("this session keeps no checkpoints")
        if idle and (self._policy.active is not None or self.engine.has_queue):
            raise RuntimeError("wait until the turn has ended (Esc cancels it)")
        return self._checkpoints

    # -- lifetime ----------------------------------------------------------------------------
    async def settled(self) -> None:
        """Resolves when no turn runs, nothing would start one (the kernel's own judgement)
        and no loop work (an error handler, an after-step hook) is still under way."""
        while True:
            await self.engine.idle()
            await self._policy.delivered()
            if not self._policy.tasks:
                return
            await asyncio.gather(*list(self._policy.tasks), return_exceptions=True)

    async def close(self) -> None:
        if await self._policy.close(self._options.abort_timeout_s + 1):
            for hook in self._close_hooks:
                await hook()

    # -- registration ------------------------------------------------------------------------
    def register_loop_error_handler(
        self, handler: LoopErrorHandler, *, before: str | None = None, after: str | None = None
    ) -> Disposable:
        return self._policy.error_handlers.register(handler.id, handler, before=before, after=after)

    # -- compaction --------------------------------------------------------------------------
    async def compact_history(
        self, history: Sequence[HistoryEntry], *, trigger: Literal["manual", "auto"] = "auto"
    ) -> bool:
        """Summarise what the model sees of `history` (the kernel's, which only grows) and
        overlay the result on it; False when there is no compactor, an `on_before_compact`
        handler blocked it, or nothing was compacted."""
        if self._compactor is None:
            return False
        before = CompactContext(trigger)
        await self.on_before_compact.run(before)
        if before.block:
            text = f"Compaction was blocked: {before.reason or 'by a hook'}"
            self._publish(ev.Notice(level="warning", text=text))
            return False
        outcome = await self._compactor(self.view(history))
        if isinstance(outcome, CompactionFailed):
            self._publish(ev.Notice(level="warning", text=f"Compaction failed: {outcome.message}"))
            return False
        self._policy.apply_compaction(len(history), outcome)
        return True


def mcp_server_infos(servers: McpServers | None) -> tuple[ev.McpServerInfo, ...]:
    """The servers' states as the `McpServersChanged` event and `mcp_servers()` give them."""
    if servers is None:
        return ()
    return tuple(ev.McpServerInfo(**vars(status)) for status in servers.statuses())


def is_context_overflow(error: TurnError) -> bool:
    return isinstance(error, LLMError) and error.kind is LLMErrorKind.CONTEXT_OVERFLOW
