"""The loop's private turn policy: what the engine calls back, and the state it keeps.

One piece (630 lines): every callback below reads and writes the same turn state (the active
turn, its prompts, the gate's hooks, the error handlers' continuation); split, one turn's state
would be shared by several modules. Its parts that hold no turn state live beside it
(`_turn.py`, `_delivery.py`, `costs.py`).

`TurnPolicy` is built first (before the engine, before the service) and is the engine's
`EngineListener`: it binds kernel turns to loop turns and their prompts, runs the step gate
(before every attempt: the previous step's `on_did_finish_step` chain to its end, then the
`on_will_begin_step` hooks), the `on_before_submit_prompt` hooks, the `on_turn_stop` hooks (which
may keep an ending turn going), the tool side channel
(`delivery` steers, `stop_turn`), the error-handler chain with `retry()`, and settles each
turn's prompt handles right after observers saw its end. It owns the commands that change that
state (submit, steer, cancel, close, `apply_compaction`). It also holds what the service's
collaborators need before the service exists (from `_delivery.py`): event delivery, the
approval queue, the plan and the usage totals. `AgentLoopService` keeps the public `LoopApi`
and delegates here; nothing outside `tui_agent.loop` imports this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from tui_agent.context import (
    Compaction,
    CompactionResult,
    ErrorReported,
    TurnEnd,
    TurnOutcome,
    UsageAdded,
)
from tui_agent.loop import events as ev
from tui_agent.loop import transcript
from tui_agent.loop._delivery import ApprovalQueue, Outbox, Subscribers
from tui_agent.loop._turn import SubmittedPrompt, Turn, until_done_or_aborted
from tui_agent.loop.adapters.journal import Journal
from tui_agent.loop.adapters.listener import StepFacts, TurnFacts
from tui_agent.loop.adapters.requester import GateOutcome
from tui_agent.loop.api import PromptState
from tui_agent.loop.costs import Budget, CostLedger, CostLine, Metering
from tui_agent.loop.hooks import (
    ErrorContext,
    LoopErrorHandler,
    OrderedHookSlot,
    OrderedRegistry,
    PromptContext,
    StepBeginContext,
    StepDoneContext,
    StopContext,
)
from tui_agent.loop.result import Cancelled, Completed, Failed, LoopRunResult, to_turn_result
from tui_agent.loop.turn_model import ModelRefused, ModelRouter
from tui_agent.usage import Pricer
from tui_agent.vocab import (
    AbortSignal,
    EntryMeta,
    ErrorCode,
    FinishReason,
    HistoryEntry,
    ImagePart,
    LoopError,
    Message,
    PlanItem,
    PromptDraft,
    TokenUsage,
    ToolCall,
    ToolResult,
    TurnError,
    user_message,
)

if TYPE_CHECKING:
    from tui_agent.loop.adapters.engine import Engine
    from tui_agent.loop.api import SubagentRun

_log = logging.getLogger("tui_agent.loop.service")  # where these failures were always logged
USER_CANCELLED = "user_cancelled"
CONTINUE_AFTER_RETRY = (
    "[loop] The previous attempt failed and the context was rebuilt. Continue the task."
)


# -- the policy ------------------------------------------------------------------------------
class TurnPolicy:
    """The engine's listener and the loop's step gate (see the module docstring)."""

    def __init__(
        self,
        *,
        journal: Journal,
        clock: Callable[[], float],
        context_window: int,
        usage: TokenUsage = TokenUsage(),
        context_tokens: int = 0,
        ledger: CostLedger | None = None,
    ) -> None:
        self._journal = journal
        self._clock = clock
        self._context_window = context_window
        self._subscribers = Subscribers(self.report_error)
        self._outbox = Outbox(self._subscribers.publish, self._log_failed)
        self._log_failure_reported = False
        self.approvals = ApprovalQueue(self.publish, journal.write)
        self.prompts: dict[str, SubmittedPrompt] = {}
        self._ids = itertools.count(1)
        self.active: Turn | None = None  # the loop turn that runs, if any
        self._turns_by_machine: dict[int, Turn] = {}
        self.tasks: set[asyncio.Task[Any]] = set()  # error handlers and after-step hooks
        self.usage = usage
        self.context_tokens = context_tokens
        self.ledger = ledger or CostLedger(
            Metering(Pricer("", provider="scripted"), Budget()), CostLine("session", cost_usd=None)
        )
        self.plan: tuple[PlanItem, ...] = ()
        # A compaction's summary stands in for the first `replaced` kernel entries.
        self.overlay: tuple[int, tuple[HistoryEntry, ...]] | None = None
        self.closed = False
        # Set by the top-level loop's factory: `Approvals.limit_turn` of its approvals.
        self.limit_tools: Callable[[Sequence[str] | None], None] | None = None
        # Set by the factory: the provider the requests go through (shared with sub-agents;
        # only the top-level loop, `owns_turns`, switches it for a turn).
        self.router: ModelRouter | None = None
        self.owns_turns = False
        self.on_will_begin_step: OrderedHookSlot[StepBeginContext] = OrderedHookSlot()
        self.on_did_finish_step: OrderedHookSlot[StepDoneContext] = OrderedHookSlot()
        self.on_before_submit_prompt: OrderedHookSlot[PromptContext] = OrderedHookSlot()
        self.on_turn_stop: OrderedHookSlot[StopContext] = OrderedHookSlot()
        self.error_handlers: OrderedRegistry[LoopErrorHandler] = OrderedRegistry()
        self._engine: Engine | None = None

    def attach(self, engine: Engine) -> None:
        """The one cycle in the wiring: the engine reports to this policy, and the policy reads
        the engine's step and continues its turn after an error handler's `retry()`."""
        self._engine = engine

    @property
    def engine(self) -> Engine:
        assert self._engine is not None, "TurnPolicy.attach was not called"
        return self._engine

    # -- event delivery ----------------------------------------------------------------------
    def subscribe(self, callback: Callable[[ev.LoopEvent], None]) -> Callable[[], None]:
        return self._subscribers.add(callback)

    def publish(self, event: ev.LoopEvent, after: asyncio.Future[None] | None = None) -> None:
        self._outbox.send(event, after)

    async def delivered(self) -> None:
        await self._outbox.delivered()

    def _log_failed(self, error: BaseException) -> None:
        """A durability barrier failed: the session log cannot be written. Said once."""
        if not self._log_failure_reported:
            self._log_failure_reported = True
            self.publish(ev.Notice(level="error", text=f"The session log stopped: {error}"))

    def internal_error(self, error: BaseException) -> None:
        self.report_error("internal error", error)

    def report_error(self, what: str, error: BaseException) -> None:
        """A failure the loop caught: logged with its traceback, written to the event log and
        published as an error notice (the app shows it; headless mode prints it on stderr)."""
        text = f"{what}: {error!r}"
        _log.error("%s", text, exc_info=error)
        self._journal.write(ErrorReported(text=text))
        self.publish(ev.Notice(level="error", text=text))

    # -- what observers see besides turns ----------------------------------------------------
    def view(self, history: Sequence[HistoryEntry]) -> Sequence[HistoryEntry]:
        """The history the model sees: the kernel's, with the compaction overlay applied."""
        if self.overlay is None:
            return history
        replaced, replacement = self.overlay
        return (*replacement, *history[replaced:])

    def set_plan(self, plan: tuple[PlanItem, ...]) -> None:
        self.plan = plan
        self.publish(ev.PlanUpdated(todos=plan))

    def subagent_usage(self, run: SubagentRun) -> None:
        """A sub-agent's tokens: counted, and logged so a reopened session counts them too."""
        model = self.serving_model()
        self._journal.write(UsageAdded(usage=run.usage, model=model))
        self.ledger.subagent(run.call_id, run.description, run.usage, run.cost_usd)
        self.add_usage(run.usage, model)

    def serving_model(self) -> str | None:
        """The model serving this turn's requests when it is not the session's."""
        turn = self.router.turn if self.router is not None else None
        return turn.model if turn is not None else None

    def add_usage(self, usage: TokenUsage, model: str | None = None) -> None:
        self.usage = self.usage + usage
        self.publish(
            transcript.usage_changed(
                self.usage,
                self.context_tokens,
                self._context_window,
                ts=self._clock(),
                cost_usd=self.ledger.session.cost_usd,
                model=model,
            )
        )
        for warning in self.ledger.metering.budget.warnings():
            self.publish(ev.Notice(level="warning", text=warning))

    # -- prompts ---------------------------------------------------------------------------
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
        if self.closed:
            raise RuntimeError("the agent loop is closed")
        chosen = None
        if model is not None:  # refused (`ModelRefused`) before anything is queued
            if self.router is None:
                raise ModelRefused(f"this loop cannot run a turn on {model}")
            chosen = self.router.choose(model)
        prompt = SubmittedPrompt(f"p{next(self._ids)}", text, allowed_tools, chosen)
        self.prompts[prompt.id] = prompt
        busy = self.active is not None or self.engine.waiting
        message = user_message(text)
        if images:
            message = Message(role="user", content=(*message.content, *images))
        entry = HistoryEntry(
            message=message,
            meta=EntryMeta(
                source="input",
                prompt_id=prompt.id,
                created_at=self._clock(),
                draft=draft if draft is not None and draft.text != text else None,
                model=chosen.model if chosen is not None else None,
            ),
        )
        await self.engine.submit(entry)
        if busy and prompt.state == "pending":
            self.publish(ev.PromptQueued(prompt_id=prompt.id, text=text))
            if steer_if_active and self.active is not None:
                steered = await self.steer([prompt.id])
                if steered and chosen is not None:
                    self._model_not_applied([chosen.model])
        return prompt

    def _model_not_applied(self, asked: Sequence[str]) -> None:
        """Said, never silent: a prompt's model cannot change a turn it joins."""
        self.publish(
            ev.Notice(
                level="warning",
                text=f"This turn runs on the session's model, not {', '.join(asked)}: "
                "that prompt joined a turn with prompts that did not ask for it.",
            )
        )

    async def steer(self, prompt_ids: list[str]) -> bool:
        if not prompt_ids or self.active is None:
            return False
        taken = await self.engine.steer(prompt_ids)
        if taken:
            # A steered prompt joins the turn whose history it enters (at the next drain
            # point, or as the opening of the next turn) and settles with that turn.
            for prompt_id in prompt_ids:
                prompt = self.prompts.get(prompt_id)
                if prompt is not None and prompt.state == "pending":
                    prompt.mark("steered")
        return taken

    async def cancel(self, prompt_id: str | None = None, *, force: bool = False) -> bool:
        """Take a queued prompt off the queue, or (none, or one the running turn holds)
        cancel the running turn; `force` ends it without waiting for its tools."""
        if prompt_id is not None:
            prompt = self.prompts.get(prompt_id)
            if prompt is None:
                return False
            if self.active is not None and (
                prompt in self.active.prompts or prompt.state == "steered"
            ):
                return await self.cancel(force=force)
            if not await self.engine.cancel_queued(prompt_id):
                return False
            prompt.settle("cancelled", ev.TurnResult(type="cancelled", steps=0, reason="removed"))
            self.publish(ev.PromptRemoved(prompt_id=prompt_id, reason="cancelled"))
            return True
        turn = self.active
        if turn is None:
            return False
        first = turn.abort_reason is None
        turn.abort_reason = turn.abort_reason or USER_CANCELLED
        self.approvals.deny("The turn was cancelled.")
        await self.engine.abort(USER_CANCELLED)  # a second abort forces the end
        if force and first:
            await self.engine.abort(USER_CANCELLED)
        return True

    async def close(self, wait_s: float) -> bool:
        """Stop taking work, cancel the running turn (waiting up to `wait_s` for it), close the
        machines and settle every prompt; False when it was closed already."""
        if self.closed:
            return False
        self.closed = True
        if self.active is not None:
            await self.cancel()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait_s):
                    await self.engine.idle()
        await self.engine.close()
        for task in list(self.tasks):
            with contextlib.suppress(Exception):
                await task
        await self.delivered()
        for prompt in self.prompts.values():
            prompt.settle("cancelled", ev.TurnResult(type="cancelled", steps=0, reason="closed"))
        return True

    def apply_compaction(self, replaced: int, outcome: CompactionResult) -> None:
        """The summary stands in for the first `replaced` kernel entries from now on."""
        self.overlay = (replaced, outcome.history)
        self.context_tokens = outcome.tokens_after
        record = Compaction(
            summary=outcome.summary,
            kept=outcome.kept,
            tokens_before=outcome.tokens_before,
            tokens_after=outcome.tokens_after,
        )
        self._journal.write(record)
        self.publish(transcript.compacted(record))

    # -- the step gate (requester adapter, before EVERY attempt) -------------------------------
    async def gate(self, history: Sequence[HistoryEntry], signal: AbortSignal) -> GateOutcome:
        # Write-ahead: nothing goes to the model before the history it sees is on disk.
        await until_done_or_aborted(self._journal.durable(), signal)
        turn = self.active
        if turn is not None and turn.after_step is not None:
            # The previous step's `on_did_finish_step` hooks run to their end first: one that
            # awaits before it sets `stop_turn` must still stop the next request.
            await until_done_or_aborted(turn.after_step, signal)
        if turn is None or signal.aborted or turn.abort_reason is not None:
            return GateOutcome(False)
        if turn.stop_requested or turn.failed_step is not None:
            return GateOutcome(False)
        # Before the hooks: a proactive compaction is a request too.
        refusal, warning = self.ledger.budget_check()
        if warning is not None:
            self.publish(ev.Notice(level="warning", text=warning))
        if refusal is not None:
            turn.failed_step = LoopError(code=ErrorCode.BUDGET_EXCEEDED, message=refusal)
            return GateOutcome(False)
        step = turn.step_base + self.engine.step
        ctx = StepBeginContext(
            turn_id=self.engine.active_turn_id or turn.turn_id,
            step=step,
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
        ctx = PromptContext(message=message)
        await self.on_before_submit_prompt.run(ctx)
        return ctx.block, ctx.message

    def prompt_dropped(self, prompt_id: str, reason: Literal["blocked", "failed"]) -> None:
        prompt = self.prompts.get(prompt_id)
        if prompt is not None:
            prompt.settle(reason, ev.TurnResult(type="cancelled", steps=0, reason=reason))

    def turn_started(self, turn_id: int, entries: tuple[HistoryEntry, ...]) -> None:
        turn = self.active
        if turn is None or not turn.continuing:
            turn = Turn(turn_id=turn_id, started_at=self._clock())
            self.active = turn
            self.ledger.begin_turn(turn_id)
            self._turns_by_machine[turn_id] = turn
            self._adopt(turn, entries)
            self._limit_tools(turn)
            self._choose_model(turn, entries)
            return
        turn.continuing = False
        turn.step_base = turn.steps
        self._turns_by_machine[turn_id] = turn
        self._adopt(turn, entries)

    def _limit_tools(self, turn: Turn) -> None:
        """A turn opened only by prompts with `allowed_tools` may use only those (their union);
        one a plain prompt joins is not limited."""
        if self.limit_tools is None:
            return
        limits = [prompt.allowed_tools for prompt in turn.prompts]
        if limits and all(limit is not None for limit in limits):
            self.limit_tools([text for limit in limits for text in limit or ()])
        else:
            self.limit_tools(None)

    def _choose_model(self, turn: Turn, entries: tuple[HistoryEntry, ...]) -> None:
        """The turn runs on the model its opening prompts asked for (`turn_model_of`)."""
        if self.router is None or not self.owns_turns:
            return
        name = transcript.turn_model_of(entries)
        chosen = next((p.model for p in turn.prompts if p.model and p.model.model == name), None)
        asked = sorted({p.model.model for p in turn.prompts if p.model is not None})
        if asked and chosen is None:  # queued prompts merged into one turn
            self._model_not_applied(asked)
        try:
            self.router.begin(chosen)
        except Exception as exc:  # its provider could not be built: the turn cannot run
            turn.failed_step = LoopError(code=ErrorCode.INTERNAL, message=f"{name}: {exc}")

    def drained(self, turn_id: int, entries: tuple[HistoryEntry, ...]) -> None:
        turn = self._turns_by_machine.get(turn_id)
        if turn is not None:
            self._adopt(turn, entries)

    def _adopt(self, turn: Turn, entries: tuple[HistoryEntry, ...]) -> None:
        """The prompts behind `entries` are in the turn's history now: they run with it and
        settle with its result."""
        for entry in entries:
            for prompt_id in entry.meta.all_prompt_ids:
                prompt = self.prompts.get(prompt_id)
                if prompt is not None and prompt not in turn.prompts:
                    prompt.mark("running")
                    turn.prompts.append(prompt)

    def usage_recorded(self, usage: TokenUsage) -> None:
        self.context_tokens = usage.total
        self.ledger.step(usage)
        self.add_usage(usage, self.serving_model())

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

    async def _after_step(self, turn: Turn, facts: StepFacts, reason: FinishReason | None) -> None:
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
        turn = self.active
        if result.stop_turn and turn is not None and not background:
            turn.stop_requested = True
            turn.stop_reason = result.stop_turn_reason

    def finish_tool_at_once(self, call: ToolCall, result: ToolResult) -> ToolResult | None:
        """Every result but one carrying a `delivery` (whose re-submission is awaited)."""
        if result.delivery is not None:
            return None
        self.ledger.tool_result(call.id, call.name, result)
        return result

    async def finish_tool(self, call: ToolCall, result: ToolResult) -> ToolResult:
        """A `delivery` is re-submitted as steer-if-active before the result reaches the turn,
        so the steer drains with this step's results; the model never sees the field."""
        self.ledger.tool_result(call.id, call.name, result)
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
        result = self._outcome(turn, facts)
        if isinstance(result, Completed) and not turn.stop_requested and self.on_turn_stop.ids:
            turn.continuing = True  # until the handlers have had their say
            self._spawn(self._before_stop(turn, facts.turn_id, result))
            return
        self._settle(turn, result)

    async def _before_stop(self, turn: Turn, turn_id: int, result: Completed) -> None:
        ctx = StopContext(turn_id, turn.last_text, turn.stop_continued)
        try:
            await self.on_turn_stop.run(ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a stop hook cannot fail the turn
            self.publish(ev.Notice(level="warning", text=f"on_turn_stop hook failed: {exc}"))
            ctx.continue_with = None
        if ctx.continue_with and not self.closed and turn.abort_reason is None:
            turn.stop_continued = True
            await self.engine.notify(
                HistoryEntry(
                    message=user_message(ctx.continue_with),
                    meta=EntryMeta(source="notify", created_at=self._clock()),
                )
            )
            return
        turn.continuing = False
        self._settle(turn, result)

    # -- settling ----------------------------------------------------------------------------
    def _outcome(self, turn: Turn, facts: TurnFacts) -> LoopRunResult:
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

    def _settle(self, turn: Turn, result: LoopRunResult) -> None:
        if self.active is turn:
            self.active = None
            if self.limit_tools is not None:
                self.limit_tools(None)
            if self.router is not None and self.owns_turns:
                own = self.router.end()
                if own is not None:
                    self._spawn(own.aclose())
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

        end = TurnEnd(turn_id=turn.turn_id, result=TurnOutcome(**wire.model_dump()))
        self._journal.write(end)
        spent = self.ledger.turn
        usage = (
            ev.CostedUsage(**spent.usage.model_dump(), cost_usd=spent.cost_usd)
            if spent is not None
            else None
        )
        self._outbox.send(transcript.turn_finished(end, turn.last_text, usage), then=settle_prompts)

    def _matching_handler(self, error: TurnError) -> LoopErrorHandler | None:
        return next((h for h in self.error_handlers.items() if h.match(error)), None)

    async def _run_error_handler(
        self, turn: Turn, facts: TurnFacts, handler: LoopErrorHandler
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
        if kept and retried and not self.closed:
            await self.engine.notify(
                HistoryEntry(
                    message=user_message(CONTINUE_AFTER_RETRY),
                    meta=EntryMeta(source="notify", created_at=self._clock()),
                )
            )
            return
        turn.continuing = False
        if turn not in self._turns_by_machine.values():
            self._settle(turn, Failed(turn.steps, error))

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
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task
