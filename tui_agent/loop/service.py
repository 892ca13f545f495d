"""AgentLoopService: the loop the UI and the command line drive (docs/loop-spec.md §5).

It owns the prompt lifecycle (handles that settle once), the step gate the requester awaits
before every attempt (max-steps, then the `on_will_begin_step` hooks), the three ordered hook
slots, the error-handler chain with `retry()`, the settling order (§5.5), the tool side
channel (`delivery` steers, `stop_turn`), approvals as awaitable requests, the compaction overlay
and the event fan-out. The kernel is reached only through `loop.adapters`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tui_agent.context import CompactionFailed, CompactionResult
from tui_agent.loop import events as ev
from tui_agent.loop.adapters.engine import Engine, StepFacts, TurnFacts
from tui_agent.loop.adapters.journal import Journal
from tui_agent.loop.adapters.requester import GateOutcome
from tui_agent.loop.adapters.tools import USER_STOPPED_CALL
from tui_agent.loop.api import (
    ApprovalDecision,
    ApprovalMode,
    LoopInfo,
    PromptState,
    RestorePlan,
)
from tui_agent.loop.checkpoints import Checkpoints
from tui_agent.loop.hooks import Disposable, OrderedHookSlot, OrderedRegistry
from tui_agent.loop.replay import Replay, restored_notice
from tui_agent.loop.result import Cancelled, Completed, Failed, LoopRunResult, to_turn_result
from tui_agent.loop.snapshot import LoopSnapshot
from tui_agent.loop.subagent import SubagentRun, Subagents, machine_prefix
from tui_agent.vocab import (
    AbortSignal,
    EntryMeta,
    ErrorCode,
    FinishReason,
    HistoryEntry,
    LLMError,
    LLMErrorKind,
    LoopError,
    Message,
    PlanItem,
    TokenUsage,
    ToolCall,
    ToolResult,
    TurnError,
    user_message,
)

if TYPE_CHECKING:
    from tui_agent.tools.mcp import McpServers

_log = logging.getLogger(__name__)
USER_CANCELLED = "user_cancelled"
Compactor = Callable[[Sequence[HistoryEntry]], Awaitable[CompactionResult | CompactionFailed]]
CONTINUE_AFTER_RETRY = (
    "[loop] The previous attempt failed and the context was rebuilt. Continue the task."
)


# -- hook contexts ---------------------------------------------------------------------------
@dataclass
class StepBeginContext:
    turn_id: int
    step: int
    first_step_of_turn: bool
    signal: AbortSignal
    history: Sequence[HistoryEntry]  # the kernel's; `service.view(history)` is the model's


@dataclass
class StepDoneContext:
    turn_id: int
    step: int
    usage: TokenUsage | None
    finish_reason: FinishReason | None
    stop_turn: bool = False


@dataclass
class PromptContext:
    message: Message
    is_steer: bool
    block: bool = False


@dataclass
class ErrorContext:
    turn_id: int
    step: int
    error: TurnError
    retry: Callable[[], None]


@dataclass(frozen=True)
class LoopErrorHandler:
    id: str
    match: Callable[[TurnError], bool]
    handle: Callable[[ErrorContext], Awaitable[bool]]


@dataclass(frozen=True)
class LoopOptions:
    max_steps: int = 0  # steps in a row without new input; 0 = unlimited (the turn enforces it)
    max_attempts_per_step: int = 10
    retry_budget_s: float = 60.0
    max_retry_after_s: float = 60.0
    abort_timeout_s: float = 10.0
    abort_grace_s: float = 2.5


# -- prompts and turns -----------------------------------------------------------------------
class _Prompt:
    def __init__(self, prompt_id: str, text: str) -> None:
        self._id = prompt_id
        self.text = text
        self._state: PromptState = "pending"
        self._result: asyncio.Future[ev.TurnResult] = asyncio.get_running_loop().create_future()

    @property
    def id(self) -> str:
        return self._id

    @property
    def state(self) -> PromptState:
        return self._state

    def mark(self, state: PromptState) -> None:
        if not self._result.done():
            self._state = state

    def settle(self, state: PromptState, result: ev.TurnResult) -> None:
        if not self._result.done():
            self._state = state
            self._result.set_result(result)

    async def result(self) -> ev.TurnResult:
        return await asyncio.shield(self._result)


@dataclass
class _Turn:
    turn_id: int
    started_at: float
    prompts: list[_Prompt] = field(default_factory=list)
    steps: int = 0  # LLM steps across every machine turn bound to this loop turn
    step_base: int = 0  # steps of earlier machine turns (error-handler continuations)
    truncated: bool = False
    filtered: bool = False
    stop_requested: bool = False
    stop_reason: str | None = None
    failed_step: TurnError | None = None
    abort_reason: str | None = None
    continuing: bool = False  # an error handler asked for a retry; the next machine turn binds
    last_text: str = ""
    after_step: asyncio.Task[None] | None = None  # the last step's `on_did_finish_step` hooks


@dataclass(eq=False)
class _Held:
    event: ev.LoopEvent
    after: asyncio.Future[None] | None
    then: Callable[[], None] | None


class _Outbox:
    """Delivers loop events in order. An event may wait for a future (a durability barrier of
    the event log); every later event waits behind it, so observers never see a turn's events
    out of order. `then` runs right after its event is delivered (prompt handles settle there,
    so a handle never resolves before observers saw its turn end)."""

    def __init__(
        self, deliver: Callable[[ev.LoopEvent], None], on_failed: Callable[[BaseException], None]
    ) -> None:
        self._deliver = deliver
        self._on_failed = on_failed
        self._held: collections.deque[_Held] = collections.deque()

    def send(
        self,
        event: ev.LoopEvent,
        after: asyncio.Future[None] | None = None,
        then: Callable[[], None] | None = None,
    ) -> None:
        held = _Held(event, after, then)
        if not self._held and (after is None or after.done()):
            self._release(held)
            return
        self._held.append(held)
        if after is not None:
            after.add_done_callback(lambda _done: self._pump())

    async def delivered(self) -> None:
        """Resolves once every event sent so far has been delivered."""
        while self._held:
            waits = [h.after for h in self._held if h.after is not None and not h.after.done()]
            if not waits:
                self._pump()
                continue
            await asyncio.wait(waits)

    def _pump(self) -> None:
        while self._held and (self._held[0].after is None or self._held[0].after.done()):
            self._release(self._held.popleft())

    def _release(self, held: _Held) -> None:
        after = held.after
        error = after.exception() if after is not None and not after.cancelled() else None
        if error is not None:
            self._on_failed(error)
        self._deliver(held.event)
        if held.then is not None:
            held.then()


class _Subscribers:
    """The event fan-out. Each subscriber is called on its own: one that raises is reported to
    `on_failure` (once per subscriber and error, not once per event) and every other subscriber
    still gets the event, so a widget bug can neither hide events from the event log nor stop a
    turn."""

    def __init__(self, on_failure: Callable[[str, BaseException], None]) -> None:
        self._callbacks: list[Callable[[ev.LoopEvent], None]] = []
        self._on_failure = on_failure
        self._reported: set[tuple[int, str]] = set()

    def add(self, callback: Callable[[ev.LoopEvent], None]) -> Callable[[], None]:
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    def publish(self, event: ev.LoopEvent) -> None:
        failed: list[BaseException] = []
        for callback in list(self._callbacks):
            try:
                callback(event)
            except Exception as error:
                key = (id(callback), repr(error))
                if key not in self._reported:
                    self._reported.add(key)
                    failed.append(error)
        # Reported once everyone has the event, so the notice follows it for every subscriber.
        for failure in failed:
            self._on_failure(f"an event subscriber failed on {event.type}", failure)


@dataclass(eq=False)
class _PendingApproval:
    request_id: str
    call_id: str
    future: asyncio.Future[tuple[ApprovalDecision, str | None]]


class AgentLoopService:
    """Implements `LoopApi`; wired by `factory.build_loop` (`session.open_loop` for the CLI)."""

    def __init__(
        self,
        *,
        info: LoopInfo,
        options: LoopOptions = LoopOptions(),
        clock: Callable[[], float] = time.time,
        subagents: Subagents | None = None,
    ) -> None:
        self._info = info
        self._subagents = subagents
        self._plan: tuple[PlanItem, ...] = ()
        self._options = options
        self._clock = clock
        self._subscribers = _Subscribers(self._report_error)
        self._outbox = _Outbox(self._subscribers.publish, self._log_failed)
        self._log_failure_reported = False
        self._prompts: dict[str, _Prompt] = {}
        self._ids = itertools.count(1)
        self._active: _Turn | None = None
        self._turns_by_machine: dict[int, _Turn] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._approvals: dict[str, _PendingApproval] = {}
        self._usage = TokenUsage()
        self._context_tokens = 0
        self._transcript: tuple[ev.LoopEvent, ...] = ()
        self._closed = False
        self.on_will_begin_step: OrderedHookSlot[StepBeginContext] = OrderedHookSlot()
        self.on_did_finish_step: OrderedHookSlot[StepDoneContext] = OrderedHookSlot()
        self.on_before_submit_prompt: OrderedHookSlot[PromptContext] = OrderedHookSlot()
        self._error_handlers: OrderedRegistry[LoopErrorHandler] = OrderedRegistry()
        self.engine: Engine  # bound by `bind_engine` (the factory builds both)
        self._journal: Journal
        self._overlay: tuple[int, tuple[HistoryEntry, ...]] | None = None
        self._set_approval_mode: Callable[[ApprovalMode], None] = lambda mode: None
        self._compactor: Compactor | None = None
        self._close_hooks: list[Callable[[], Awaitable[None]]] = []
        self._mcp: McpServers | None = None
        self._checkpoints: Checkpoints | None = None

    # -- wiring (factory) --------------------------------------------------------------------
    def bind_engine(self, engine: Engine, journal: Journal) -> None:
        self.engine = engine
        self._journal = journal

    def on_close(self, hook: Callable[[], Awaitable[None]]) -> None:
        self._close_hooks.append(hook)

    def carry_on_from(self, replay: Replay) -> None:
        """A resumed session: its transcript so far, and the usage the status bar goes on from."""
        self._transcript = replay.events
        self._usage = replay.usage
        self._context_tokens = replay.context_tokens

    def bind_checkpoints(self, checkpoints: Checkpoints) -> None:
        self._checkpoints = checkpoints

    def bind_approval_mode(self, setter: Callable[[ApprovalMode], None]) -> None:
        self._set_approval_mode = setter

    def bind_mcp(self, servers: McpServers) -> None:
        self._mcp = servers

    async def start(self) -> None:
        await self.engine.agent.start()

    # -- LoopApi: views ----------------------------------------------------------------------
    @property
    def info(self) -> LoopInfo:
        return self._info

    def history(self) -> list[HistoryEntry]:
        return list(self.view(self.engine.agent.history))

    def transcript(self) -> tuple[ev.LoopEvent, ...]:
        return self._transcript

    def view(self, history: Sequence[HistoryEntry]) -> Sequence[HistoryEntry]:
        """The history the model sees: the kernel's, with a compaction overlay applied."""
        if self._overlay is None:
            return history
        replaced, replacement = self._overlay
        return (*replacement, *history[replaced:])

    def snapshot(self) -> LoopSnapshot:
        agent = self.engine.agent
        return LoopSnapshot(
            agent_state=agent.state,
            turn_state=agent.turn_state,
            active_turn_id=self.engine.active_turn_id,
            step=self.engine.step,
            paused=agent.paused,
            queue=self.engine.queue(),
            notifications=self.engine.notifications(),
            tools=self.engine.live_tools(),
            machine_states=self._machine_states(),
            plan=self._plan,
        )

    def _machine_states(self) -> dict[str, str]:
        """This loop's machines, then each running sub-agent's under its task's title."""
        states = self.engine.machine_states()
        for run in self._subagents.live() if self._subagents else ():
            assert run.loop is not None
            for machine, state in run.loop.snapshot().machine_states.items():
                states[f"{machine_prefix(run)}{machine}"] = state
        return states

    @property
    def plan(self) -> tuple[PlanItem, ...]:
        return self._plan

    def set_plan(self, plan: tuple[PlanItem, ...]) -> None:
        """The model's new plan (from `todo_write`, or the last one of a resumed session)."""
        self._plan = plan
        self.publish(ev.PlanUpdated(todos=plan))

    def subagent(self, call_id: str) -> SubagentRun | None:
        """The sub-agent a `task` call started: live, or done with its history."""
        return self._subagents.get(call_id) if self._subagents else None

    def add_usage(self, usage: TokenUsage) -> None:
        """Tokens spent on the user's behalf outside this loop's own steps (a sub-agent's):
        they count in the totals but not in this loop's context size."""
        self._usage = self._usage + usage
        self.publish(
            ev.UsageChanged(
                total=self._usage,
                context_tokens=self._context_tokens,
                context_window=self._info.context_window,
            )
        )

    def subscribe(self, callback: Callable[[ev.LoopEvent], None]) -> Callable[[], None]:
        return self._subscribers.add(callback)

    async def events(self) -> AsyncIterator[ev.LoopEvent]:
        queue: asyncio.Queue[ev.LoopEvent] = asyncio.Queue()
        remove = self.subscribe(queue.put_nowait)
        try:
            while True:
                yield await queue.get()
        finally:
            remove()

    # -- LoopApi: commands -------------------------------------------------------------------
    async def submit(self, text: str, *, steer_if_active: bool = False) -> _Prompt:
        if self._closed:
            raise RuntimeError("the agent loop is closed")
        prompt = _Prompt(f"p{next(self._ids)}", text)
        self._prompts[prompt.id] = prompt
        busy = self._active is not None or self.engine.agent.paused or bool(self.engine.agent.queue)
        entry = HistoryEntry(
            message=user_message(text),
            meta=EntryMeta(source="input", prompt_id=prompt.id, created_at=self._clock()),
        )
        await self.engine.agent.submit(entry)
        if busy and prompt.state == "pending":
            self.publish(ev.PromptQueued(prompt_id=prompt.id, text=text))
            if steer_if_active and self._active is not None:
                await self.steer([prompt.id])
        return prompt

    async def steer(self, prompt_ids: list[str]) -> bool:
        if not prompt_ids or self._active is None:
            return False
        taken = await self.engine.agent.steer(prompt_ids)
        if taken:
            # A steered prompt joins the turn whose history it enters (at the next drain
            # point, or as the opening of the next turn) and settles with that turn.
            for prompt_id in prompt_ids:
                prompt = self._prompts.get(prompt_id)
                if prompt is not None and prompt.state == "pending":
                    prompt.mark("steered")
        return taken

    async def cancel(self, prompt_id: str | None = None, *, force: bool = False) -> bool:
        if prompt_id is not None:
            prompt = self._prompts.get(prompt_id)
            if prompt is None:
                return False
            if self._active is not None and (
                prompt in self._active.prompts or prompt.state == "steered"
            ):
                return await self.cancel(force=force)
            if not await self.engine.agent.cancel_queued(prompt_id):
                return False
            prompt.settle("cancelled", ev.TurnResult(type="cancelled", steps=0, reason="removed"))
            self.publish(ev.PromptRemoved(prompt_id=prompt_id, reason="cancelled"))
            return True
        turn = self._active
        if turn is None:
            return False
        first = turn.abort_reason is None
        turn.abort_reason = turn.abort_reason or USER_CANCELLED
        self._deny_pending_approvals("The turn was cancelled.")
        await self.engine.agent.abort(USER_CANCELLED)  # a second abort forces the end
        if force and first:
            await self.engine.agent.abort(USER_CANCELLED)
        return True

    async def cancel_tool(self, call_id: str) -> bool:
        for pending in list(self._approvals.values()):
            if pending.call_id == call_id and not pending.future.done():
                pending.future.set_result(("deny", "The user stopped this call."))
        return await self.engine.agent.abort_tool(call_id, USER_STOPPED_CALL)

    async def edit_queued(self, prompt_id: str, text: str) -> bool:
        prompt = self._prompts.get(prompt_id)
        if prompt is None or not await self.engine.agent.edit_queued(prompt_id, user_message(text)):
            return False
        prompt.text = text
        self.publish(ev.PromptRemoved(prompt_id=prompt_id, reason="edited"))
        self.publish(ev.PromptQueued(prompt_id=prompt_id, text=text))
        return True

    async def move_queued(self, prompt_id: str, offset: int) -> bool:
        return await self.engine.agent.move_queued(prompt_id, offset)

    async def notify(self, text: str) -> None:
        entry = HistoryEntry(
            message=user_message(text), meta=EntryMeta(source="notify", created_at=self._clock())
        )
        await self.engine.agent.notify(entry)
        self.publish(ev.NotificationQueued(source="notify", text=text))

    async def remind(self, key: str, text: str) -> None:
        entry = HistoryEntry(
            message=user_message(text),
            meta=EntryMeta(source="reminder", key=key, created_at=self._clock()),
        )
        await self.engine.agent.remind(key, entry)
        self.publish(ev.NotificationQueued(source="reminder", text=text, key=key))

    async def answer_approval(
        self, request_id: str, decision: ApprovalDecision, reason: str | None = None
    ) -> None:
        pending = self._approvals.get(request_id)
        if pending is not None and not pending.future.done():
            pending.future.set_result((decision, reason))

    def set_approval_mode(self, mode: ApprovalMode) -> None:
        self._set_approval_mode(mode)
        self._info = LoopInfo(**{**self._info.__dict__, "approval_mode": mode})
        self.publish(ev.Notice(level="info", text=f"Approval mode: {mode}"))

    async def compact(self) -> None:
        if self._compactor is None:
            self.publish(ev.Notice(level="warning", text="Compaction is not available."))
            return
        await self.compact_history(self.engine.agent.history)  # a failure says so itself

    # -- MCP servers ---------------------------------------------------------------------------
    def mcp_servers(self) -> tuple[ev.McpServerInfo, ...]:
        if self._mcp is None:
            return ()
        return tuple(ev.McpServerInfo(**vars(status)) for status in self._mcp.statuses())

    async def mcp_started(self) -> None:
        """Resolves when every MCP server is up or has failed (each within its start-up time)."""
        if self._mcp is not None:
            await self._mcp.wait_started()

    async def reconnect_mcp(self, name: str) -> bool:
        return self._mcp is not None and await self._mcp.reconnect(name)

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
        self.publish(ev.Notice(level="info", text=restored_notice(restored)))
        return restored

    async def rewind_conversation(self, turn: int) -> None:
        await self._restorer(idle=True).rewind(turn)

    def _restorer(self, *, idle: bool = False) -> Checkpoints:
        if self._checkpoints is None:
            raise RuntimeError("this session keeps no checkpoints")
        if idle and (self._active is not None or self.engine.agent.queue):
            raise RuntimeError("wait until the turn has ended (Esc cancels it)")
        return self._checkpoints

    async def settled(self) -> None:
        """Resolves when no turn runs, nothing would start one (the kernel's own judgement)
        and no loop work (an error handler, an after-step hook) is still under way."""
        while True:
            await self.engine.agent.idle()
            await self._outbox.delivered()
            if not self._tasks:
                return
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._active is not None:
            await self.cancel()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._options.abort_timeout_s + 1):
                    await self.engine.agent.idle()
        await self.engine.agent.close()
        for task in list(self._tasks):
            with contextlib.suppress(Exception):
                await task
        await self._outbox.delivered()
        for prompt in self._prompts.values():
            prompt.settle("cancelled", ev.TurnResult(type="cancelled", steps=0, reason="closed"))
        for hook in self._close_hooks:
            await hook()

    # -- registration ------------------------------------------------------------------------
    def register_loop_error_handler(
        self, handler: LoopErrorHandler, *, before: str | None = None, after: str | None = None
    ) -> Disposable:
        return self._error_handlers.register(handler.id, handler, before=before, after=after)

    def set_compactor(self, compactor: Compactor) -> None:
        """`compactor(view)` summarises what the model sees, or says why it could not."""
        self._compactor = compactor

    # -- approvals (called by the tools' Approvals through the factory) -----------------------
    async def ask_approval(
        self, request_id: str, call_id: str, name: str, summary: str, rule: str, preview: str
    ) -> tuple[ApprovalDecision, str | None]:
        future: asyncio.Future[tuple[ApprovalDecision, str | None]] = (
            asyncio.get_running_loop().create_future()
        )
        self._approvals[request_id] = _PendingApproval(request_id, call_id, future)
        self.publish(
            ev.ApprovalRequested(
                request_id=request_id,
                call_id=call_id,
                name=name,
                summary=summary,
                rule=rule,
                preview=preview,
            )
        )
        try:
            decision, reason = await future
        finally:
            self._approvals.pop(request_id, None)
        self.publish(ev.ApprovalResolved(request_id=request_id, call_id=call_id, decision=decision))
        return decision, reason

    def _deny_pending_approvals(self, reason: str) -> None:
        for pending in list(self._approvals.values()):
            if not pending.future.done():
                pending.future.set_result(("deny", reason))

    # -- the step gate (requester adapter, before EVERY attempt) -------------------------------
    async def gate(self, history: Sequence[HistoryEntry], signal: AbortSignal) -> GateOutcome:
        # Write-ahead: nothing goes to the model before the history it sees is on disk.
        await _until_done_or_aborted(self._journal.durable(), signal)
        turn = self._active
        if turn is not None and turn.after_step is not None:
            # The previous step's `on_did_finish_step` hooks run to their end first: one that
            # awaits before it sets `stop_turn` must still stop the next request.
            await _until_done_or_aborted(turn.after_step, signal)
        if turn is None or signal.aborted or turn.abort_reason is not None:
            return GateOutcome(False)
        if turn.stop_requested:
            return GateOutcome(False)
        step = turn.step_base + self.engine.step
        ctx = StepBeginContext(
            turn_id=self.engine.active_turn_id or turn.turn_id,
            step=step,
            first_step_of_turn=step == 1,
            signal=signal,
            history=history,
        )
        try:
            await self.on_will_begin_step.run(ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            turn.failed_step = LoopError(
                code=ErrorCode.HANDLER_FAILED, message=f"on_will_begin_step hook failed: {exc}"
            )
            return GateOutcome(False)
        return GateOutcome(not signal.aborted)

    # -- EngineListener ----------------------------------------------------------------------
    async def gate_prompt(self, message: Message) -> tuple[bool, Message]:
        """The `on_before_submit_prompt` hooks, run on each queued prompt before it enters
        history: a hook may set `block` or replace `message` (a rewrite)."""
        ctx = PromptContext(message=message, is_steer=False)
        await self.on_before_submit_prompt.run(ctx)
        return ctx.block, ctx.message

    def prompt_dropped(self, prompt_id: str, reason: Literal["blocked", "failed"]) -> None:
        prompt = self._prompts.get(prompt_id)
        if prompt is not None:
            prompt.settle(reason, ev.TurnResult(type="cancelled", steps=0, reason=reason))

    def publish(self, event: ev.LoopEvent, after: asyncio.Future[None] | None = None) -> None:
        self._outbox.send(event, after)

    def _log_failed(self, error: BaseException) -> None:
        """A durability barrier failed: the session log cannot be written. Said once."""
        if not self._log_failure_reported:
            self._log_failure_reported = True
            self.publish(ev.Notice(level="error", text=f"The session log stopped: {error}"))

    def internal_error(self, error: BaseException) -> None:
        self._report_error("internal error", error)

    def _report_error(self, what: str, error: BaseException) -> None:
        """A failure the loop caught: logged with its traceback, written to the event log and
        published as an error notice (the app shows it; headless mode prints it on stderr)."""
        text = f"{what}: {error!r}"
        _log.error("%s", text, exc_info=error)
        self._journal.error(text)
        self.publish(ev.Notice(level="error", text=text))

    def turn_started(self, turn_id: int, entries: tuple[HistoryEntry, ...]) -> None:
        turn = self._active
        if turn is None or not turn.continuing:
            turn = _Turn(turn_id=turn_id, started_at=self._clock())
            self._active = turn
        else:
            turn.continuing = False
            turn.step_base = turn.steps
        self._turns_by_machine[turn_id] = turn
        self._adopt(turn, entries)

    def drained(self, turn_id: int, entries: tuple[HistoryEntry, ...]) -> None:
        turn = self._turns_by_machine.get(turn_id)
        if turn is not None:
            self._adopt(turn, entries)

    def _adopt(self, turn: _Turn, entries: tuple[HistoryEntry, ...]) -> None:
        """The prompts behind `entries` are in the turn's history now: they run with it and
        settle with its result."""
        for entry in entries:
            ids = entry.meta.prompt_ids or ((entry.meta.prompt_id,) if entry.meta.prompt_id else ())
            for prompt_id in ids:
                prompt = self._prompts.get(prompt_id)
                if prompt is not None and prompt not in turn.prompts:
                    prompt.mark("running")
                    turn.prompts.append(prompt)

    def usage_recorded(self, usage: TokenUsage) -> None:
        self._context_tokens = usage.total
        self.add_usage(usage)

    def step_finished(self, facts: StepFacts) -> None:
        turn = self._turns_by_machine.get(facts.turn_id)
        if turn is None:
            return
        turn.steps = turn.step_base + facts.step
        reason = facts.finish.reason if facts.finish else None
        turn.truncated = reason is FinishReason.MAX_TOKENS
        if reason is FinishReason.FILTERED:
            turn.filtered = True
        turn.after_step = self._spawn(self._after_step(turn, facts, reason))

    async def _after_step(self, turn: _Turn, facts: StepFacts, reason: FinishReason | None) -> None:
        ctx = StepDoneContext(facts.turn_id, turn.steps, facts.usage, reason)
        try:
            await self.on_did_finish_step.run(ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # an after-step hook cannot fail the turn
            self.publish(ev.Notice(level="warning", text=f"on_did_finish_step hook failed: {exc}"))
        if ctx.stop_turn:
            turn.stop_requested = True

    def tool_result(self, call_id: str, result: ToolResult, background: bool) -> None:
        turn = self._active
        if result.stop_turn and turn is not None and not background:
            turn.stop_requested = True
            turn.stop_reason = result.stop_turn_reason

    async def finish_tool(self, call: ToolCall, result: ToolResult) -> ToolResult:
        """A `delivery` is re-submitted as steer-if-active before the result reaches the turn,
        so the steer drains with this step's results; the model never sees the field."""
        if result.delivery is None:
            return result
        await self.submit(result.delivery.message.text, steer_if_active=True)
        return result.model_copy(update={"delivery": None})

    def turn_ended(self, facts: TurnFacts) -> None:
        turn = self._turns_by_machine.pop(facts.turn_id, None)
        if turn is None:
            return
        for entry in reversed(facts.produced):
            if entry.message.role == "assistant" and entry.message.text.strip():
                turn.last_text = entry.message.text
                break
        if facts.outcome != "aborted" and facts.error is not None:
            handler = self._matching_handler(facts.error) if turn.failed_step is None else None
            if handler is not None and turn.abort_reason is None:
                turn.continuing = True  # the next machine turn belongs to this loop turn
                self._spawn(self._run_error_handler(turn, facts, handler))
                return
        self._settle(turn, self._outcome(turn, facts))

    # -- settling ----------------------------------------------------------------------------
    def _outcome(self, turn: _Turn, facts: TurnFacts) -> LoopRunResult:
        steps = max(turn.steps, turn.step_base + facts.steps)
        if turn.failed_step is not None and turn.abort_reason is None:
            return Failed(steps, turn.failed_step)
        if facts.outcome == "aborted" or turn.abort_reason is not None:
            return Cancelled(steps, turn.abort_reason or facts.reason or "aborted")
        if turn.filtered:
            return Failed(
                steps,
                LoopError(
                    code=ErrorCode.PROVIDER_FILTERED,
                    message="Provider safety policy blocked the response.",
                ),
            )
        if turn.stop_requested:
            return Completed(steps, turn.truncated, turn.stop_reason)
        if facts.outcome == "failed":
            error = facts.error or LoopError(code=ErrorCode.INTERNAL, message="The turn failed.")
            return Failed(steps, error)
        return Completed(steps, turn.truncated, turn.stop_reason)

    def _settle(self, turn: _Turn, result: LoopRunResult) -> None:
        if self._active is turn:
            self._active = None
        wire = to_turn_result(result)
        state: PromptState = {
            "completed": "completed",
            "failed": "failed",
            "cancelled": "cancelled",
        }[wire.type]  # type: ignore[assignment]
        prompts = tuple(turn.prompts)

        def settle_prompts() -> None:
            for prompt in prompts:
                prompt.settle(state, wire)

        self._journal.turn_end(turn.turn_id, wire)
        self._outbox.send(
            ev.TurnFinished(turn_id=turn.turn_id, text=turn.last_text, result=wire),
            then=settle_prompts,
        )

    def _matching_handler(self, error: TurnError) -> LoopErrorHandler | None:
        return next((h for h in self._error_handlers.items() if h.match(error)), None)

    async def _run_error_handler(
        self, turn: _Turn, facts: TurnFacts, handler: LoopErrorHandler
    ) -> None:
        error = facts.error
        assert error is not None
        retried = False

        def retry() -> None:
            nonlocal retried
            retried = True

        ctx = ErrorContext(turn_id=facts.turn_id, step=turn.steps, error=error, retry=retry)
        try:
            kept = await handler.handle(ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            turn.continuing = False
            self._settle(
                turn,
                Failed(
                    turn.steps,
                    LoopError(code=ErrorCode.HANDLER_FAILED, message=f"{handler.id}: {exc}"),
                ),
            )
            return
        if kept and retried and not self._closed:
            await self.engine.agent.notify(
                HistoryEntry(
                    message=user_message(CONTINUE_AFTER_RETRY),
                    meta=EntryMeta(source="notify", created_at=self._clock()),
                )
            )
            return
        turn.continuing = False
        if turn not in self._turns_by_machine.values():
            self._settle(turn, Failed(turn.steps, error))

    # -- compaction --------------------------------------------------------------------------
    async def compact_history(self, history: Sequence[HistoryEntry]) -> bool:
        """Summarise what the model sees of `history` (the kernel's, which only grows) and
        overlay the result on it; False when there is no compactor or nothing was compacted."""
        if self._compactor is None:
            return False
        outcome = await self._compactor(self.view(history))
        if isinstance(outcome, CompactionFailed):
            self.publish(ev.Notice(level="warning", text=f"Compaction failed: {outcome.message}"))
            return False
        self._overlay = (len(history), outcome.history)
        self._context_tokens = outcome.tokens_after
        self._journal.compaction(
            outcome.summary, outcome.kept, outcome.tokens_before, outcome.tokens_after
        )
        self.publish(
            ev.Compacted(
                summary=outcome.summary,
                tokens_before=outcome.tokens_before,
                tokens_after=outcome.tokens_after,
            )
        )
        return True

    # -- tasks -------------------------------------------------------------------------------
    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[None]:
        async def run() -> None:
            try:
                await coro
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.internal_error(exc)

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


async def _until_done_or_aborted(work: asyncio.Future[None], signal: AbortSignal) -> None:
    """Wait for `work` (never raising for it: its failure is reported where it happens), or
    until `signal` aborts."""
    if not work.done():
        aborted = asyncio.ensure_future(signal.wait())
        try:
            waits: set[asyncio.Future[Any]] = {work, aborted}
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
    if work.done() and not work.cancelled():
        work.exception()  # seen: the outbox reports a failed log, a failed hook says so itself


def is_context_overflow(error: TurnError) -> bool:
    return isinstance(error, LLMError) and error.kind is LLMErrorKind.CONTEXT_OVERFLOW
