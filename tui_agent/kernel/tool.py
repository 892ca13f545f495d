# python-statemachine types `State.to` without the targetless `None` it accepts at run time,
# and nested compound classes as factories; transition tables would need an ignore per line.
# mypy: disable-error-code="arg-type"
"""The tool machine: the life of one tool call.

The seed's rules: docs/loop-spec.md §4.

    preparing --(hook: proceed, maybe with a replaced call)--> executing
    preparing --(hook: deny with a result)-------------------> finishing
    executing --(the runner returns)-------------------------> finishing
    executing --(the runner returns, hook finishes at once)--> succeeded
    finishing --(hook: maybe rewrite the result)-------------> succeeded
    no hooks, or hooks that never prepare: born executing
    a hook or the runner raising ----------------------------> failed (aborted if the signal is)
    tool.abort while preparing ------------------------------> aborted
    tool.stop anywhere (forced teardown) --------------------> aborted

Abort goes through the signal only: `tool.abort` is ignored while executing, the runner sees
its `signal` and decides (it may still return a partial result, which is kept); a call born
executing whose signal aborted before it ran ends aborted without running, as it would have
in preparing. Without hooks, or when `finish_at_once` takes the result, the executing phase
returns it `_Finished` and the call settles in that one microstep. Each phase is
an async invoke that returns a value (never raises), so errors are values and a stale phase
cannot leak: leaving a state cancels its invoke. `settled` resolves with the machine once it is
final; `result` is then what enters history (failures and aborts as error text).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, ClassVar

from statemachine import Event, State

from tui_agent.kernel.chart import Emit, KernelChart
from tui_agent.kernel.events import (
    Machine,
    ToolDetached,
    ToolOutput,
    ToolProgress,
    ToolState,
)
from tui_agent.kernel.ports import Deny, Proceed, ToolHooks, ToolRunner
from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import AbortSignal, ToolCall, ToolResult, ToolUpdate, error_result

ABORTED_TEXT = "aborted"
NO_RESULT_TEXT = "produced no result"

OnDetach = Callable[[str, str], None]


@dataclass(frozen=True)
class _Finished:
    """The executing phase's result with the after-tool work done: nothing is left to do."""

    result: ToolResult


@dataclass(frozen=True)
class _Raised:
    """A phase ended with an exception, turned into a value."""

    text: str
    aborted: bool


def _error_text(error: BaseException) -> str:
    return str(error) or type(error).__name__


class ToolContext:
    """What the runner gets for one call: the signal, `on_update`, `on_state` and `detach`.

    Bound to one life of the machine: once the machine is reused for another call, a runner
    that kept this context reaches nothing through it."""

    def __init__(self, tool: ToolMachine) -> None:
        self._tool = tool
        self._life = tool.life
        self.signal = tool.signal

    def on_update(self, update: ToolUpdate) -> None:
        if self._tool.life == self._life:
            self._tool.emit_update(update)

    def on_state(self, state: str) -> None:
        if self._tool.life == self._life:
            self._tool.emit_progress(state)

    def detach(self, ack: str) -> None:
        if self._tool.life == self._life:
            self._tool.detach(ack)


class ToolMachine(KernelChart):
    machine_kind: ClassVar[Machine] = "tool"

    class live(State.Compound):
        preparing = State(initial=True)
        executing = State()
        finishing = State()

    succeeded = State(final=True)
    failed = State(final=True)
    aborted = State(final=True)

    done_invoke_preparing = (
        live.preparing.to(live.executing, cond="proceeds", on="take_call")
        | live.preparing.to(live.finishing, cond="denies", on="take_result")
        | live.preparing.to(failed, on="take_failure")
    )
    done_invoke_executing = (
        live.executing.to(succeeded, cond="finished", on="take_finished")
        | live.executing.to(live.finishing, cond="ran", on="take_result")
        | live.executing.to(aborted, cond="raised_aborted", on="take_abort")
        | live.executing.to(failed, on="take_failure")
    )
    done_invoke_finishing = live.finishing.to(
        succeeded, cond="ran", on="take_result"
    ) | live.finishing.to(failed, on="take_failure")
    tool_abort = Event(
        live.preparing.to(aborted, on="take_abort"), id="tool.abort", name="tool.abort"
    )
    tool_stop = Event(live.to(aborted, on="take_abort"), id="tool.stop", name="tool.stop")
    error_execution = live.to(None, on="record_error")

    def __init__(
        self,
        call: ToolCall,
        runner: ToolRunner,
        signal: AbortSignal,
        emit: Emit,
        errors: list[BaseException],
        *,
        hooks: ToolHooks | None = None,
        on_detach: OnDetach | None = None,
    ) -> None:
        self.life = 0
        self._begin(call, signal)
        self._runner = runner
        self._hooks = hooks
        self._on_detach = on_detach
        # A call without hooks, or whose hooks never prepare, is born executing.
        self._born_executing = hooks is None or not hooks.prepares
        super().__init__(emit, call.id, errors, start="executing" if self._born_executing else None)

    def _begin(self, call: ToolCall, signal: AbortSignal) -> None:
        self.call = call
        self.original_id = call.id  # history pairs results with the id the model gave
        self.signal = signal
        self.result: ToolResult | None = None
        self.detached = False
        self.settled: asyncio.Future[ToolMachine] = asyncio.get_running_loop().create_future()

    def reuse(self, call: ToolCall, signal: AbortSignal) -> None:
        """Start a new life for another call, before `activate`. Only a settled machine can be
        reused: building one costs far more than a step (the library resolves every callback
        per instance), so the agent keeps settled machines and reuses them."""
        assert self.is_terminated, "only a settled tool machine can be reused"
        self.life += 1
        self._begin(call, signal)
        self.machine_id = call.id
        self.reset_chart()

    # -- phases (invokes): each returns a value, never raises ----------------------------------

    async def on_invoke_preparing(self) -> Proceed | Deny | _Raised:
        hooks = self._hooks
        assert hooks is not None  # without hooks the machine is born executing
        try:
            return await hooks.prepare(self.call)
        except Exception as error:
            return _Raised(_error_text(error), self.signal.aborted)

    async def on_invoke_executing(self) -> ToolResult | _Finished | _Raised:
        hooks = self._hooks
        if hooks is not None and self._born_executing and self.signal.aborted:
            # Hooks that skip preparing must not change what an early abort does: in preparing
            # the call would have ended aborted without running.
            return _Raised(ABORTED_TEXT, aborted=True)
        try:
            result = await self._runner.run(self.call, ToolContext(self))
        except Exception as error:
            return _Raised(_error_text(error), self.signal.aborted)
        if not isinstance(result, ToolResult):
            result = error_result(NO_RESULT_TEXT)
        if hooks is None:
            return _Finished(result)
        try:
            finished = hooks.finish_at_once(self.call, result)
        except Exception as error:  # a failing hook fails the call, as it would in finishing
            return _Raised(_error_text(error), aborted=False)
        return result if finished is None else _Finished(finished)

    async def on_invoke_finishing(self) -> ToolResult | _Raised:
        hooks = self._hooks
        assert hooks is not None  # as for preparing
        try:
            return await hooks.finish(self.call, self.final_result)
        except Exception as error:
            return _Raised(_error_text(error), self.signal.aborted)

    # -- guards ---------------------------------------------------------------------------------

    def finished(self, data: Any) -> bool:
        return isinstance(data, _Finished)

    def proceeds(self, data: Any) -> bool:
        return isinstance(data, Proceed)

    def denies(self, data: Any) -> bool:
        return isinstance(data, Deny)

    def ran(self, data: Any) -> bool:
        return isinstance(data, ToolResult)

    def raised_aborted(self, data: Any) -> bool:
        return isinstance(data, _Raised) and data.aborted

    # -- actions --------------------------------------------------------------------------------

    def take_call(self, data: Proceed) -> None:
        self.call = data.call

    def take_result(self, data: ToolResult | Deny) -> None:
        self.result = data.result if isinstance(data, Deny) else data

    def take_finished(self, data: _Finished) -> None:
        self.result = data.result

    def take_failure(self, data: Any = None) -> None:
        self.result = error_result(data.text if isinstance(data, _Raised) else NO_RESULT_TEXT)

    def take_abort(self) -> None:
        self.result = error_result(ABORTED_TEXT)

    def after_transition(self, event: Any, source: Any, target: Any) -> None:
        # A transition callback, not a state-entry one, so the diagram stays uncluttered.
        super().after_transition(event, source, target)
        if target is not None and target.final and not self.settled.done():
            self.settled.set_result(self)

    # -- what the runner calls ------------------------------------------------------------------

    @property
    def outcome(self) -> ToolState:
        name: ToolState = self.state_path  # type: ignore[assignment]
        return name

    @property
    def final_result(self) -> ToolResult:
        """What enters history once settled (every final state sets `result`)."""
        return self.result if self.result is not None else error_result(NO_RESULT_TEXT)

    def emit_update(self, update: ToolUpdate) -> None:
        self._emit(ToolOutput(self.original_id, update))

    def emit_progress(self, status: str) -> None:
        if not self.is_terminated:
            self._emit(ToolProgress(self.original_id, self.call.name, status))

    def detach(self, ack: str) -> None:
        """The first detach moves the call to the background; later ones are ignored."""
        if self.detached or self.is_terminated:
            return
        self.detached = True
        self._emit(ToolDetached(self.original_id, self.call.name, ack))
        if self._on_detach is not None:
            self._on_detach(self.original_id, ack)
