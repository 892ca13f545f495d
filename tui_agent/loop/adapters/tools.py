"""The tools adapter: fills the kernel's ToolRunner port with the batch executor.

The kernel starts one tool machine per call, but the scheduler must see a step's calls
together to order conflicting ones. `begin_batch` records the calls the step announced; each
`run` parks its call until every announced call is parked, then ONE executor batch runs them
all and each parked call is answered with its own result. A call that arrives with no batch
announced (or after its batch started) runs alone. Whatever happens, every parked call gets
exactly one result: aborted before execution (marked aborted, saying it never started),
superseded by a duplicate id, executor failure, or no result at all each become a clear error
result. An optional `note` adds to each result before the kernel sees it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence

from tui_agent.kernel.ports import ToolRunContext
from tui_agent.lazy_dataclass import dataclass
from tui_agent.tools import BatchExecutor, CallContext, aborted_result
from tui_agent.vocab import AbortSignal, ToolCall, ToolResult, error_result

USER_STOPPED_CALL = "user_stopped_call"  # the reason `AgentLoopService.cancel_tool` gives


@dataclass(eq=False)
class _Parked:
    call: ToolCall
    ctx: ToolRunContext
    future: asyncio.Future[ToolResult]


ResultNote = Callable[[ToolCall, ToolResult], Awaitable[ToolResult]]
"""Adds to a finished call's result what the session knows about it (a sub-folder's memory
file, for the first file read there)."""


class LoopToolRunner:
    def __init__(self, executor: BatchExecutor, note: ResultNote | None = None) -> None:
        self._executor = executor
        self._note = note
        self._expected: set[str] = set()
        self._parked: dict[str, _Parked] = {}
        self._signal = AbortSignal()
        self._tasks: set[asyncio.Task[None]] = set()

    def begin_batch(self, calls: Sequence[ToolCall], signal: AbortSignal) -> None:
        # Calls still parked from an earlier batch can never run now: settle them.
        for parked in self._parked.values():
            _settle(parked, aborted_result(parked.call.name, None, started=False))
        self._parked = {}
        self._expected = {call.id for call in calls}
        self._signal = signal

    async def run(self, call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        result = await self._run(call, ctx)
        return result if self._note is None else await self._note(call, result)

    async def _run(self, call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        parked = _Parked(call, ctx, asyncio.get_running_loop().create_future())
        if call.id not in self._expected:
            self._launch([parked], self._signal)
            return await parked.future
        previous = self._parked.pop(call.id, None)
        if previous is not None:
            _settle(previous, error_result(f'Tool call "{call.id}" was superseded by a duplicate.'))
        self._parked[call.id] = parked
        ctx.signal.add_callback(lambda reason: self._abort_parked(call.id, reason))
        if self._expected <= set(self._parked):
            batch, self._parked, self._expected = list(self._parked.values()), {}, set()
            self._launch(batch, self._signal)
        return await parked.future

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _abort_parked(self, call_id: str, reason: str) -> None:
        """A parked call's signal aborted before its batch started. A turn abort voids the
        whole batch; the user stopping one call takes only that call out of it."""
        if call_id not in self._parked:
            return
        if reason == USER_STOPPED_CALL:
            parked = self._parked.pop(call_id)
            self._expected.discard(call_id)
            _settle(parked, aborted_result(parked.call.name, reason, started=False))
            if self._parked and self._expected <= set(self._parked):
                batch, self._parked, self._expected = list(self._parked.values()), {}, set()
                self._launch(batch, self._signal)
            return
        for parked in self._parked.values():
            _settle(parked, aborted_result(parked.call.name, reason, started=False))
        self._parked, self._expected = {}, set()

    def _launch(self, batch: list[_Parked], signal: AbortSignal) -> None:
        task = asyncio.create_task(self._run_batch(batch, signal))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_batch(self, batch: list[_Parked], signal: AbortSignal) -> None:
        by_id = {parked.call.id: parked for parked in batch}
        contexts = [(parked.call, self._call_context(parked)) for parked in batch]
        try:
            async for call_id, result in self._executor.execute(contexts, signal):
                parked = by_id.pop(call_id, None)
                if parked is not None:
                    _settle(parked, result)
        except asyncio.CancelledError:
            for parked in by_id.values():
                _settle(parked, aborted_result(parked.call.name, signal.reason))
            raise
        except Exception as exc:  # the executor itself broke: every remaining call says so
            for parked in by_id.values():
                _settle(parked, error_result(f'Tool "{parked.call.name}" failed: {exc}'))
            return
        for parked in by_id.values():
            _settle(parked, error_result(f'Tool "{parked.call.name}" produced no result.'))

    def _call_context(self, parked: _Parked) -> CallContext:
        return CallContext(
            signal=parked.ctx.signal,
            on_update=parked.ctx.on_update,
            detach=parked.ctx.detach,
            on_state=parked.ctx.on_state,
        )


def _settle(parked: _Parked, result: ToolResult) -> None:
    if not parked.future.done():
        parked.future.set_result(result)
