# python-statemachine types `State.to` without the targetless `None` it accepts at run time,
# and nested compound classes as factories; transition tables would need an ignore per line.
# mypy: disable-error-code="arg-type"
"""The agent machine: inputs, one turn at a time, tools (its facade is `kernel/facade.py`).

The seed's rules: docs/loop-spec.md §2; the states are drawn in `AgentMachine`'s docstring.
The agent owns the input queue (prompts), notifications, reminders (one per key, drained only
inside a turn), the committed history, and every tool machine. When idle with work and not
paused it commits notifications then prompts (after the optional prompt gate) and runs ONE
turn child from an invoke; the turn's outcome comes back as the invoke's value. Tools are
spawned when the turn asks (`TurnHost.spawn_tools`), each driven by a task that reports
`tool.settled`; a detached call moves to `background` and its later completion becomes an
`async-tool` notification. Abort is two-phase: the first `input.abort` aborts the turn and its
tools' signals; a second one, or `abort_timeout_s`, forces the end.

Turn-to-agent calls (`spawn_tools`, `drain`) are plain methods, not events: the turn calls them
from inside its own step, and a synchronous answer avoids nesting a second machine's loop there.
The tool bookkeeping lives in the machine's base, `AgentTools` (`kernel/agent_tools.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, ClassVar

from statemachine import Event, State

from tui_agent.kernel.agent_tools import AgentTools
from tui_agent.kernel.chart import Emit
from tui_agent.kernel.events import (
    AbortBegun,
    Machine,
    PromptBlocked,
    PromptGateFailed,
    SteerMerged,
    TurnEnded,
    TurnOpened,
)
from tui_agent.kernel.inputs import ends_mid_tool_chain, merge_steer
from tui_agent.kernel.options import KernelOptions
from tui_agent.kernel.ports import GateVerdict, PromptGate, Requester, ToolHooks, ToolRunner
from tui_agent.kernel.turn import TurnMachine
from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import AbortSignal, HistoryEntry, Message


@dataclass(frozen=True)
class _GateRun:
    """The prompt gate's verdicts for a snapshot of the queue (or why it threw)."""

    items: tuple[HistoryEntry, ...]
    verdicts: tuple[GateVerdict, ...]
    error: str | None = None


def _same(a: HistoryEntry, b: HistoryEntry) -> bool:
    pid = a.meta.prompt_id
    return a is b or (pid is not None and pid == b.meta.prompt_id)


def _event(dotted: str, transitions: Any) -> Any:
    """An event whose name has a dot (`input.submit`): the attribute name cannot say it."""
    return Event(transitions, id=dotted, name=dotted)


def _input(dotted: str, live: Any, on: str) -> Any:
    """An input taken in any live state without a change of state: it only runs `on`."""
    return _event(dotted, live.to(None, on=on))


class AgentMachine(AgentTools):
    """One agent: its inputs, one turn at a time, and its tools. The states:

    live                 every input is taken here; `error.execution` -> record_error
    ├── idle
    │   ├── ready        (initial) with work: to gating (a gate) or running, eventless
    │   ├── gating       invokes the prompt gate on a snapshot of the queue
    │   └── waiting      no work, tools still running in the background
    └── running          invokes the turn; ends back in idle when the turn ends
        ├── active       (initial)
        └── aborting     after the first `input.abort`; invokes the abort timeout
    closed               (final) after `input.close`
    """

    machine_kind: ClassVar[Machine] = "agent"

    class live(State.Compound):
        class idle(State.Compound):
            ready = State(initial=True)
            gating = State()
            waiting = State()

        class running(State.Compound):
            active = State(initial=True)
            aborting = State()

    closed = State(final=True)

    # Eventless transitions (on atomic states, so the diagram draws them).
    live.idle.ready.to(live.idle.gating, cond="gate_applies")
    live.idle.ready.to(live.running, cond="has_work", on="commit")
    live.idle.ready.to(live.idle.waiting, cond="has_background")
    live.idle.waiting.to(live.idle.gating, cond="gate_applies")
    live.idle.waiting.to(live.running, cond="has_work", on="commit")
    live.idle.waiting.to(live.idle.ready, cond="no_background")

    done_invoke_gating = (
        live.idle.gating.to(live.idle.ready, cond="gate_stale")
        | live.idle.gating.to(live.idle.ready, cond="gate_threw", on="fail_queue")
        | live.idle.gating.to(live.running, cond="gate_passed", on="apply_gate_and_commit")
        | live.idle.gating.to(live.idle.ready, on="apply_gate")
    )
    done_invoke_running = live.running.to(live.idle, cond="current_turn", before="end_turn")
    done_invoke_aborting = live.running.aborting.to(None, on="force_abort")

    input_continue = _event(
        "input.continue",
        live.idle.ready.to(live.running, cond="resumes_chain", on="resume")
        | live.idle.waiting.to(live.running, cond="resumes_chain", on="resume")
        | live.to(None, on="resume"),
    )
    input_abort = _event(
        "input.abort",
        live.running.active.to(live.running.aborting, on="begin_abort")
        | live.running.aborting.to(None, on="force_abort"),
    )
    input_submit = _input("input.submit", live, "enqueue")
    input_notify = _input("input.notify", live, "add_notification")
    input_remind = _input("input.remind", live, "add_reminder")
    input_steer = _input("input.steer", live, "steer_prompts")
    input_cancel = _input("input.cancel", live, "cancel_prompt")
    input_edit = _input("input.edit", live, "edit_prompt")
    input_move = _input("input.move", live, "move_prompt")
    input_pause = _input("input.pause", live, "pause_turn")
    input_abort_tool = _input("input.abort_tool", live, "abort_one_tool")
    input_reset = _event("input.reset", live.to(live.idle, before="note_exit", on="apply_reset"))
    input_close = _event("input.close", live.to(closed, before="note_exit"))
    tool_settled = _input("tool.settled", live, "settle_tools")
    tool_detached = _input("tool.detached", live, "detach_tool")
    error_execution = live.to(None, on="record_error")

    def __init__(
        self,
        requester: Requester,
        runner: ToolRunner,
        emit: Emit,
        errors: list[BaseException],
        *,
        options: KernelOptions,
        hooks: ToolHooks | None,
        gate: PromptGate | None,
        history: Sequence[HistoryEntry],
    ) -> None:
        self.committed: list[HistoryEntry] = list(history)
        self.queue: list[HistoryEntry] = []
        self.notifications: list[HistoryEntry] = []
        self.reminders: dict[str, HistoryEntry] = {}
        self.paused = False
        self.turn_id = 0
        self.active_turn_id: int | None = None
        self.turn: TurnMachine | None = None
        self.abort_reason: str | None = None
        self._requester = requester
        self._runner = runner
        self._options = options
        self._hooks = hooks
        self._gate = gate
        self._root = AbortSignal()
        self._turn_scope = AbortSignal(self._root)
        self._drain_batch: list[HistoryEntry] | None = None
        self._opening: tuple[HistoryEntry, ...] = ()
        self._turn_reported = True
        self._exit_reason = "aborted"
        self._waiters: list[asyncio.Future[None]] = []
        super().__init__(emit, "agent", errors)

    # -- idle: guards ----------------------------------------------------------------------------

    def gate_applies(self) -> bool:
        return self._gate is not None and bool(self.queue) and not self.paused

    def has_work(self) -> bool:
        return not self.paused and bool(self.notifications or self.queue)

    def has_background(self) -> bool:
        return bool(self.background)

    def no_background(self) -> bool:
        return not self.background

    def resumes_chain(self) -> bool:
        return not self.notifications and not self.queue and ends_mid_tool_chain(self.committed)

    @property
    def settled(self) -> bool:
        """No turn runs and nothing would start one now."""
        return (
            (self.live.idle.ready.is_active or self.live.idle.waiting.is_active)
            and not self.has_work()
            and not self.gate_applies()
        )

    # -- idle: the prompt gate -------------------------------------------------------------------

    async def on_invoke_gating(self) -> _GateRun:
        gate = self._gate
        items = tuple(self.queue)
        if gate is None:
            return _GateRun(items, tuple(GateVerdict() for _ in items))
        try:
            verdicts = tuple([await gate(item) for item in items])
        except Exception as error:  # a throwing gate fails the queue, it never escapes
            return _GateRun(items, (), str(error) or type(error).__name__)
        return _GateRun(items, verdicts)

    def gate_stale(self, data: _GateRun) -> bool:
        return self.paused or any(
            not any(item is queued for queued in self.queue) for item in data.items
        )

    def gate_threw(self, data: _GateRun) -> bool:
        return data.error is not None

    def gate_passed(self, data: _GateRun) -> bool:
        return any(not verdict.block for verdict in data.verdicts)

    def fail_queue(self, data: _GateRun) -> None:
        for item in self.queue:
            self._emit(PromptGateFailed(item.meta.prompt_id, data.error or ""))
        self.queue.clear()

    def apply_gate(self, data: _GateRun) -> None:
        passed: list[HistoryEntry] = []
        for item, verdict in zip(data.items, data.verdicts, strict=True):
            if verdict.block:
                self._emit(PromptBlocked(item.meta.prompt_id))
            elif verdict.message is not None:
                passed.append(item.model_copy(update={"message": verdict.message}))
            else:
                passed.append(item)
        arrivals = self.queue[len(data.items) :]
        self.queue = passed + arrivals
        self._drain_batch = passed

    def apply_gate_and_commit(self, data: _GateRun) -> None:
        self.apply_gate(data)
        self.commit()

    # -- running: one turn -----------------------------------------------------------------------

    def commit(self) -> None:
        """Notifications, then the drained prompts (the whole queue without a gate)."""
        drained = self._drain_batch if self._drain_batch is not None else list(self.queue)
        entries = (*self.notifications, *drained)
        self.committed.extend(entries)
        self.notifications.clear()
        self.queue = [q for q in self.queue if not any(_same(d, q) for d in drained)]
        self._drain_batch = None
        self._opening = entries

    def resume(self) -> None:
        self.paused = False
        self._opening = ()
        if self.turn is not None:
            self._spawn(self.turn.send("turn.continue"))

    def on_enter_running(self) -> None:
        self.active_turn_id = self.turn_id
        self.abort_reason = None
        self._turn_reported = False
        self._turn_scope = AbortSignal(self._root)
        opening, self._opening = self._opening, ()
        self._emit(TurnOpened(self.turn_id, opening))

    async def on_invoke_running(self) -> TurnMachine:
        turn = self.turn = TurnMachine(
            self.turn_id,
            tuple(self.committed),
            self._requester,
            self,
            self._turn_scope,
            self._options,
            self._emit,
            self.errors,
            paused=self.paused,
        )
        await turn.activate()
        if self.abort_reason is not None:
            # The abort came before this invoke started: the turn was not there to hear it.
            await turn.send("turn.abort", reason=self.abort_reason)
        return await turn.ended

    def current_turn(self, data: TurnMachine) -> bool:
        return data is self.turn and data.turn_id == self.active_turn_id

    def end_turn(self, data: TurnMachine) -> None:
        produced = tuple(data.produced)
        self.committed.extend(produced)
        self._turn_reported = True
        self._emit(
            TurnEnded(
                data.turn_id,
                data.outcome or "aborted",
                produced,
                data.step,
                data.error,
                data.abort_reason if data.outcome == "aborted" else None,
            )
        )

    def note_exit(self, reason: str = "") -> None:
        self._exit_reason = reason

    async def on_exit_running(self) -> None:
        """Stop the turn and its tools; the next turn gets the next id."""
        turn, reason = self.turn, self.abort_reason or self._exit_reason
        if turn is not None and not turn.is_terminated:
            await turn.send("turn.abort", reason=reason, force=True)
        if not self._turn_reported:
            # Reset or close ended the turn early: what it produced is void.
            steps = turn.step if turn is not None else 0
            self._emit(TurnEnded(self.turn_id, "aborted", (), steps, None, reason))
            self._turn_reported = True
        for call_id in list(self.turn_tools):
            await self._stop_tool(call_id, reason)
        self.turn_tools.clear()
        self._turn_scope.abort(reason)
        self.turn = None
        self.turn_id += 1
        self.active_turn_id = None

    # -- running: the turn's host ----------------------------------------------------------------

    def steer_waiting(self) -> bool:
        return any(entry.meta.in_turn for entry in self.notifications)

    def has_inputs(self) -> bool:
        return bool(self.notifications or self.reminders)

    def drain(self) -> tuple[HistoryEntry, ...]:
        entries = (*self.notifications, *self.reminders.values())
        self.notifications.clear()
        self.reminders.clear()
        return entries

    # -- running: abort --------------------------------------------------------------------------

    async def begin_abort(self, reason: str = "user_cancelled") -> None:
        self.abort_reason = reason
        self._emit(AbortBegun(self.turn_id, reason))
        self._turn_scope.abort(reason)
        if self.turn is not None:
            await self.turn.send("turn.abort", reason=reason)
        for call_id in list(self.turn_tools):
            tool = self.tools.get(call_id)
            if tool is not None:
                tool.signal.abort(reason)
                await tool.send("tool.abort")

    async def on_invoke_aborting(self) -> None:
        await self._options.sleep(self._options.abort_timeout_s)

    async def force_abort(self, reason: str | None = None) -> None:
        if reason is not None:
            self.abort_reason = reason
        reason = self.abort_reason or "aborted"
        if self.turn is not None:
            await self.turn.send("turn.abort", reason=reason, force=True)
        for call_id in list(self.turn_tools):
            await self._stop_tool(call_id, reason)

    # -- inputs (targetless, any state) ----------------------------------------------------------

    def enqueue(self, entry: HistoryEntry) -> None:
        self.queue.append(entry)

    def add_notification(self, entry: HistoryEntry) -> None:
        self.notifications.append(entry)

    def add_reminder(self, reminder_key: str, entry: HistoryEntry) -> None:
        # `key` as a payload name would clash with the library's own `key` argument.
        key = reminder_key
        self.reminders.pop(key, None)
        self.reminders[key] = entry.model_copy(
            update={"meta": entry.meta.model_copy(update={"key": key})}
        )

    def steer_prompts(self, prompt_ids: Sequence[str]) -> None:
        wanted = set(prompt_ids)
        taken = [item for item in self.queue if item.meta.prompt_id in wanted]
        if not taken:
            return
        self.queue = [item for item in self.queue if item.meta.prompt_id not in wanted]
        merged = merge_steer(taken)
        self.notifications.append(merged)
        self._emit(SteerMerged(merged.meta.prompt_ids, merged))

    def cancel_prompt(self, prompt_id: str) -> None:
        self.queue = [item for item in self.queue if item.meta.prompt_id != prompt_id]

    def edit_prompt(self, prompt_id: str, message: Message) -> None:
        self.queue = [
            item.model_copy(update={"message": message})
            if item.meta.prompt_id == prompt_id
            else item
            for item in self.queue
        ]

    def move_prompt(self, prompt_id: str, offset: int) -> None:
        index = next(
            (i for i, item in enumerate(self.queue) if item.meta.prompt_id == prompt_id), None
        )
        if index is None:
            return
        item = self.queue.pop(index)
        self.queue.insert(min(max(index + offset, 0), len(self.queue)), item)

    def pause_turn(self) -> None:
        self.paused = True
        if self.turn is not None:
            self._spawn(self.turn.send("turn.pause"))

    async def apply_reset(self, history: Sequence[HistoryEntry]) -> None:
        """New history; every tool dies (background too); queue and notifications stay."""
        self._root.abort("reset")
        self._root = AbortSignal()
        for call_id in list(self.tools):
            await self._stop_tool(call_id, "reset")
        self.tools.clear()
        self.background.clear()
        self.turn_tools.clear()
        self.committed = list(history)
        self._drain_batch = None

    async def on_enter_closed(self) -> None:
        self._root.abort("closed")
        for call_id in list(self.tools):
            await self._stop_tool(call_id, "closed")
        self.background.clear()
        self._wake()

    # -- plumbing --------------------------------------------------------------------------------

    def after_transition(self, event: Any, source: Any, target: Any) -> None:
        super().after_transition(event, source, target)
        self._wake()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def wait_changed(self) -> None:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await waiter
