"""Runs one step's tool calls as a batch: preflight, approval, scheduling, abort grace, shaping.

`BatchExecutor.execute(calls, signal)` yields `(call_id, result)` in completion order, exactly
once per call, and never raises for a call's sake:

- preflight, in provider order: the tool must exist, the argument JSON must parse to an object
  (`null` or empty means `{}`) and validate against the tool's model;
- a call whose tool says `stops_batch` for its arguments stops the batch before anything runs:
  the calls after it never start. A result with `stop_batch_after_this` stops the calls after
  it that have not started yet;
- each valid call goes to the scheduler with its accesses; when its turn comes it is checked
  against stop-batch, checked by its tool (`Tool.check`: an edit whose text is not in the file
  fails here, before anyone is asked), approved (or denied), and run. A call that detaches
  (`ctx.detach`) frees its scheduler slot at once and yields its final result when the
  background work ends;
- when a call's signal aborts, a queued call or one awaiting approval is answered at once, and a
  running one gets `abort_grace_s` to finish before it is cancelled and reported aborted;
- every result is normalised and spilled to disk when too long.

A sub-agent's executor shares its parent's scheduler (its calls are ordered against the
parent's and every sibling's) and asks about its calls under the id of the `task` call that
runs it (`approval_call_id`): the call the person sees, and may stop, in the parent's tools.

The person's hooks (`CallHooks`, the loop's `PreToolUse` and `PostToolUse`) run inside the
call's scheduler slot: `before` once the tool's own check passed and before approval (a "deny"
refuses the call, "allow" and "ask" go to the approvals), `after` once the tool ended and
before the slot is freed (a formatter a hook runs on the file the call wrote is not raced).

An observer of a call's progress (`on_update`) that raises never fails the call it watches; its
first failure per call goes to `report` (the loop makes it an error notice; by default: the log).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from tui_agent.lazy_dataclass import dataclass
from tui_agent.tools import _results
from tui_agent.tools._accesses import ToolAccesses
from tui_agent.tools._approvals import Approvals, HookDecision
from tui_agent.tools._base import Tool, ToolAborted, ToolContext
from tui_agent.tools._registry import ToolRegistry
from tui_agent.tools._scheduler import ToolScheduler
from tui_agent.tools._workspace import Workspace
from tui_agent.vocab import AbortSignal, ToolCall, ToolResult, ToolUpdate, error_result

Report = Callable[[str, BaseException], None]  # (what failed, the error)
_log = logging.getLogger(__name__)


def _log_failure(what: str, error: BaseException) -> None:
    _log.error("%s: %r", what, error, exc_info=error)


@dataclass
class CallContext:
    signal: AbortSignal  # this call's own signal (per-call cancel)
    on_update: Callable[[ToolUpdate], None]
    detach: Callable[[str], None]
    on_state: Callable[[str], None]  # "queued" | "awaiting_approval" | "running"


class Checkpointer(Protocol):
    """Keeps what a call is about to overwrite: `before` runs before the tool (a failure fails
    the call, which then writes nothing), `after` once it is over, whatever its outcome."""

    async def before(self, call_id: str, paths: Sequence[str]) -> None: ...

    async def after(self, call_id: str, paths: Sequence[str]) -> None: ...


class CallHooks(Protocol):
    """Programs the person configured around every call (the loop's user hooks)."""

    async def before(
        self, name: str, args: dict[str, Any], call_id: str
    ) -> HookDecision | ToolResult | None:
        """None: no opinion; a `ToolResult`: the call is refused with it."""
        ...

    async def after(
        self, name: str, args: dict[str, Any], call_id: str, result: ToolResult
    ) -> ToolResult: ...


@dataclass(frozen=True)
class _Prepared:
    tool: Tool[Any]
    args: BaseModel


class _Detached:
    """What a scheduler slot returns when its call went on in the background."""


_DETACHED = _Detached()


@dataclass
class _Batch:
    stopped_at: int | None = None  # provider index of the call that stopped the batch

    def skips(self, index: int) -> bool:
        return self.stopped_at is not None and index > self.stopped_at

    def note(self, index: int, result: ToolResult) -> ToolResult:
        if result.stop_batch_after_this and (self.stopped_at is None or index < self.stopped_at):
            self.stopped_at = index
        return result


@dataclass(eq=False)
class _Run:
    index: int
    call: ToolCall
    context: CallContext
    prepared: _Prepared
    signal: AbortSignal
    batch: _Batch
    report: Report
    detached: asyncio.Future[str] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    task: asyncio.Task[ToolResult] | None = None
    update_failed: bool = False

    def detach(self, ack: str) -> None:
        if self.detached.done():
            return
        self.detached.set_result(ack)
        self.context.detach(ack)

    def update(self, update: ToolUpdate) -> None:
        try:
            self.context.on_update(update)
        except Exception as error:  # a broken observer must not fail the tool it watches
            if not self.update_failed:  # once: a streaming tool updates many times a second
                self.update_failed = True
                self.report(f"showing the progress of {self.call.name} failed", error)


def _first_stop(prepared: Sequence[_Prepared | ToolResult]) -> int | None:
    """The index of the first call whose execution descriptor stops the batch."""
    for index, prep in enumerate(prepared):
        if isinstance(prep, _Prepared) and prep.tool.stops_batch(prep.args):
            return index
    return None


def _futures(*futures: asyncio.Future[Any]) -> set[asyncio.Future[Any]]:
    return set(futures)


def _explain(error: ValidationError) -> str:
    problems = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        problems.append(f"{where}: {item['msg']}")
    return "; ".join(problems)


class BatchExecutor:
    def __init__(
        self,
        registry: ToolRegistry,
        workspace: Workspace,
        approvals: Approvals,
        spill_dir: Path,
        *,
        abort_grace_s: float,  # the loop derives it from the turn's (KernelOptions)
        scheduler: ToolScheduler | None = None,
        checkpointer: Checkpointer | None = None,
        approval_call_id: str | None = None,
        report: Report = _log_failure,
        hooks: CallHooks | None = None,
    ) -> None:
        self.registry = registry
        self._hooks = hooks
        self._report = report
        self.checkpointer = checkpointer
        self.workspace = workspace
        self.approvals = approvals
        self.spill_dir = spill_dir
        self._grace = abort_grace_s
        self._scheduler = scheduler or ToolScheduler()
        self._approval_call_id = approval_call_id
        self._live: set[_Run] = set()

    async def execute(
        self, calls: Sequence[tuple[ToolCall, CallContext]], signal: AbortSignal
    ) -> AsyncIterator[tuple[str, ToolResult]]:
        if not calls:
            return
        prepared = [self._preflight(call) for call, _ in calls]
        accesses = await asyncio.to_thread(self._accesses, prepared)
        batch = _Batch(stopped_at=_first_stop(prepared))
        done: asyncio.Queue[tuple[str, ToolResult]] = asyncio.Queue()
        handlers = [
            asyncio.create_task(
                self._handle(index, call, context, prep, access, batch, signal, done)
            )
            for index, ((call, context), prep, access) in enumerate(
                zip(calls, prepared, accesses, strict=True)
            )
        ]
        try:
            for _ in calls:
                yield await done.get()
        finally:
            for handler in handlers:
                handler.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)

    async def aclose(self) -> None:
        """Stop every call still running, background ones included (the executor is going away)."""
        runs = list(self._live)
        for run in runs:
            run.signal.abort("executor_closed")
        tasks = [run.task for run in runs if run.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=self._grace)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _preflight(self, call: ToolCall) -> _Prepared | ToolResult:
        tool = self.registry.get(call.name)
        if tool is None:
            return _results.not_found(call.name)
        raw = call.arguments.strip()
        try:
            data = json.loads(raw) if raw else None
        except json.JSONDecodeError as error:
            return _results.invalid_args(call.name, f"the arguments are not valid JSON ({error})")
        if data is None:
            data = {}
        if not isinstance(data, dict):
            return _results.invalid_args(call.name, "the arguments must be a JSON object")
        try:
            args = tool.Args.model_validate(data)
        except ValidationError as error:
            return _results.invalid_args(call.name, _explain(error))
        return _Prepared(tool, args)

    @staticmethod
    def _accesses(prepared: Sequence[_Prepared | ToolResult]) -> list[ToolAccesses]:
        # Runs in a thread: tools resolve paths (symlinks) to say what they touch.
        out = []
        for prep in prepared:
            if isinstance(prep, ToolResult):
                out.append(ToolAccesses.none())
                continue
            try:
                out.append(prep.tool.accesses(prep.args))
            except Exception:  # a tool that cannot say what it touches runs alone
                out.append(ToolAccesses.all())
        return out

    async def _handle(
        self,
        index: int,
        call: ToolCall,
        context: CallContext,
        prep: _Prepared | ToolResult,
        accesses: ToolAccesses,
        batch: _Batch,
        batch_signal: AbortSignal,
        done: asyncio.Queue[tuple[str, ToolResult]],
    ) -> None:
        if isinstance(prep, ToolResult):
            result = prep
        else:
            signal = AbortSignal(parent=context.signal)
            batch_signal.add_callback(signal.abort)
            run = _Run(index, call, context, prep, signal, batch, self._report)
            self._live.add(run)
            try:
                result = await self._run(run, accesses)
            except Exception as error:  # the executor's own bug must still pair the call
                result = _results.failed(call.name, error)
            finally:
                self._live.discard(run)
            batch.note(index, result)
        result = _results.normalize(result)
        result = await _results.spill(result, call.name, call.id, self.spill_dir)
        done.put_nowait((call.id, result))

    async def _run(self, run: _Run, accesses: ToolAccesses) -> ToolResult:
        run.context.on_state("queued")
        slot = self._scheduler.add(accesses, lambda: self._occupy(run))
        abort = asyncio.ensure_future(run.signal.wait())
        try:
            await asyncio.wait(_futures(slot, abort), return_when=asyncio.FIRST_COMPLETED)
            if slot.done():
                value = slot.result()
                if not isinstance(value, _Detached):
                    return value
                assert run.task is not None
                await asyncio.wait(_futures(run.task, abort), return_when=asyncio.FIRST_COMPLETED)
                if run.task.done():
                    return self._outcome(run)
            if run.task is None:  # still queued or awaiting approval: answer at once
                slot.cancel()
                return _results.aborted(run.call.name, run.signal.reason, started=False)
            return await self._grace_period(run)
        finally:
            abort.cancel()
            # Only matters when this handler itself is cancelled (the batch is being closed):
            # a started tool is cancelled and frees its slot when it has cleaned up.
            if run.task is None:
                slot.cancel()
            elif not run.task.done():
                run.task.cancel()

    async def _occupy(self, run: _Run) -> ToolResult | _Detached:
        """The scheduled part of a call: checks, approval, the tool until it ends or detaches."""
        name = run.call.name
        if run.signal.aborted:
            return _results.aborted(name, run.signal.reason, started=False)
        if run.batch.skips(run.index):
            return error_result(_results.SKIPPED)
        tool, args = run.prepared.tool, run.prepared.args
        problem = await tool.check(args)  # before asking: nobody approves a call bound to fail
        if problem is not None:
            return error_result(problem)
        hook = None
        if self._hooks is not None:
            said = await self._hooks.before(name, args.model_dump(mode="json"), run.call.id)
            if isinstance(said, ToolResult):
                return _results.denied(said)
            hook = said
        try:
            denial = await self.approvals.review(
                tool,
                args,
                self._approval_call_id or run.call.id,
                lambda: run.context.on_state("awaiting_approval"),
                hook,
            )
        except Exception as error:
            return error_result(f'Asking the user to approve "{name}" failed: {error}')
        if denial is not None:
            return _results.denied(denial)
        if run.batch.skips(run.index):
            return error_result(_results.SKIPPED)
        run.context.on_state("running")
        ctx = ToolContext(
            run.signal, run.update, run.detach, self.workspace, run.call.id, self.spill_dir
        )
        run.task = asyncio.create_task(self._execute(tool, args, ctx))
        # A tool cancelled after its grace may still fail while nobody awaits it any more.
        run.task.add_done_callback(lambda t: None if t.cancelled() else t.exception())
        await asyncio.wait(_futures(run.task, run.detached), return_when=asyncio.FIRST_COMPLETED)
        if run.task.done():
            result = self._outcome(run)
            if self._hooks is not None:
                result = await self._hooks.after(
                    name, args.model_dump(mode="json"), run.call.id, result
                )
            # Marked before the slot is released, so the calls it frees see the stop.
            return run.batch.note(run.index, result)
        return _DETACHED

    async def _execute(self, tool: Tool[Any], args: BaseModel, ctx: ToolContext) -> ToolResult:
        paths = tool.written_paths(args) if self.checkpointer is not None else ()
        if not paths or self.checkpointer is None:
            return await tool.execute(args, ctx)
        await self.checkpointer.before(ctx.call_id, paths)
        try:
            return await tool.execute(args, ctx)
        finally:
            await self.checkpointer.after(ctx.call_id, paths)

    async def _grace_period(self, run: _Run) -> ToolResult:
        assert run.task is not None
        finished, _ = await asyncio.wait({run.task}, timeout=self._grace)
        if not finished:
            run.task.cancel()
            return _results.aborted(run.call.name, run.signal.reason)
        return self._outcome(run)

    def _outcome(self, run: _Run) -> ToolResult:
        task, name, signal = run.task, run.call.name, run.signal
        assert task is not None and task.done()
        if task.cancelled():
            return _results.aborted(name, signal.reason)
        error = task.exception()
        if isinstance(error, ToolAborted):
            return _results.aborted(name, signal.reason, error.partial)
        if error is not None:
            return (
                _results.aborted(name, signal.reason)
                if signal.aborted
                else _results.failed(name, error)
            )
        value: object = task.result()
        if value is None:
            return error_result(f'Tool "{name}" returned no result.')
        if not isinstance(value, ToolResult):
            return error_result(f'Tool "{name}" returned {type(value).__name__}, not a ToolResult.')
        return value
