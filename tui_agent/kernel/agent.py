# python-statemachine types `State.to` without the targetless `None` it accepts at run time,
# and nested compound classes as factories; transition tables would need an ignore per line.
# mypy: disable-error-code="arg-type"
"""The agent machine and its facade `Agent`: inputs, one turn at a time, tools.

The seed's rules: docs/loop-spec.md §2.

    live.idle(ready, gating, waiting) <-> live.running(active, aborting) ; closed (final)

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
Why this module runs past 500 lines: it holds the machine and the facade together, because
the facade is only a thin, typed skin over the machine's events and views (the architecture fixes
`Agent` here), and splitting it would put the two halves of one contract in different files.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from statemachine import Event, State

from tui_agent.kernel.chart import Emit, ErrorLog, KernelChart, guarded_emit
from tui_agent.kernel.events import (
    AbortBegun,
    Machine,
    PromptBlocked,
    PromptGateFailed,
    SteerMerged,
    ToolSettled,
    ToolState,
    TurnEnded,
    TurnOpened,
)
from tui_agent.kernel.inputs import async_tool_notification, ends_mid_tool_chain, merge_steer
from tui_agent.kernel.options import KernelOptions
from tui_agent.kernel.ports import GateVerdict, PromptGate, Requester, ToolHooks, ToolRunner
from tui_agent.kernel.tool import ToolMachine
from tui_agent.kernel.turn import TurnMachine
from tui_agent.vocab import AbortSignal, HistoryEntry, Message, ToolCall, ToolResult


@dataclass(frozen=True)
class _Settled:
    """One call's outcome as `tool.settled` carries it."""

    call_id: str
    name: str
    outcome: ToolState
    result: ToolResult


@dataclass(frozen=True)
class _GateRun:
    """The prompt gate's verdicts for a snapshot of the queue (or why it threw)."""

    items: tuple[HistoryEntry, ...]
    verdicts: tuple[GateVerdict, ...]
    error: str | None = None


def _same(a: HistoryEntry, b: HistoryEntry) -> bool:
    pid = a.meta.prompt_id
    return a is b or (pid is not None and pid == b.meta.prompt_id)


class AgentMachine(KernelChart):
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

    input_continue = Event(
        live.idle.ready.to(live.running, cond="resumes_chain", on="resume")
        | live.idle.waiting.to(live.running, cond="resumes_chain", on="resume")
        | live.to(None, on="resume"),
        id="input.continue",
        name="input.continue",
    )
    input_abort = Event(
        live.running.active.to(live.running.aborting, on="begin_abort")
        | live.running.aborting.to(None, on="force_abort"),
        id="input.abort",
        name="input.abort",
    )
    input_submit = Event(live.to(None, on="enqueue"), id="input.submit", name="input.submit")
    input_notify = Event(
        live.to(None, on="add_notification"), id="input.notify", name="input.notify"
    )
    input_remind = Event(live.to(None, on="add_reminder"), id="input.remind", name="input.remind")
    input_steer = Event(live.to(None, on="steer_prompts"), id="input.steer", name="input.steer")
    input_cancel = Event(live.to(None, on="cancel_prompt"), id="input.cancel", name="input.cancel")
    input_edit = Event(live.to(None, on="edit_prompt"), id="input.edit", name="input.edit")
    input_move = Event(live.to(None, on="move_prompt"), id="input.move", name="input.move")
    input_pause = Event(live.to(None, on="pause_turn"), id="input.pause", name="input.pause")
    input_abort_tool = Event(
        live.to(None, on="abort_one_tool"), id="input.abort_tool", name="input.abort_tool"
    )
    input_reset = Event(
        live.to(live.idle, before="note_exit", on="apply_reset"),
        id="input.reset",
        name="input.reset",
    )
    input_close = Event(live.to(closed, before="note_exit"), id="input.close", name="input.close")
    tool_settled = Event(live.to(None, on="settle_tools"), id="tool.settled", name="tool.settled")
    tool_detached = Event(live.to(None, on="detach_tool"), id="tool.detached", name="tool.detached")
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
        self.tools: dict[str, ToolMachine] = {}
        self._spare_tools: list[ToolMachine] = []
        self._just_settled: list[ToolMachine] = []  # reported together as one `tool.settled`
        self.turn_tools: set[str] = set()
        self.background: set[str] = set()
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
        self._tasks: set[asyncio.Task[None]] = set()
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

    def spawn_tools(self, calls: tuple[ToolCall, ...]) -> None:
        try:
            self._runner.begin_batch(calls, self._turn_scope)
        except Exception as error:
            # The batch announcement is advisory; each call still runs and fails on its own.
            self.record_error(error)
        aborting = self.live.running.aborting.is_active
        tools: list[ToolMachine] = []
        for call in calls:
            signal = AbortSignal(self._root)
            if aborting:
                signal.abort(self.abort_reason or "aborted")
            tool = self._tool_machine(call, signal)
            tool.settled.add_done_callback(self._on_tool_settled)
            self.tools[call.id] = tool
            self.turn_tools.add(call.id)
            tools.append(tool)
        self._spawn(self._start_tools(tools))

    def steer_waiting(self) -> bool:
        return any(entry.meta.in_turn for entry in self.notifications)

    def drain(self) -> tuple[HistoryEntry, ...]:
        entries = (*self.notifications, *self.reminders.values())
        self.notifications.clear()
        self.reminders.clear()
        return entries

    def _tool_machine(self, call: ToolCall, signal: AbortSignal) -> ToolMachine:
        if self._spare_tools:
            tool = self._spare_tools.pop()
            tool.reuse(call, signal)
            return tool
        return ToolMachine(
            call,
            self._runner,
            signal,
            self._emit,
            self.errors,
            hooks=self._hooks,
            on_detach=self._on_detach,
        )

    async def _start_tools(self, tools: list[ToolMachine]) -> None:
        for tool in tools:
            await tool.activate()
            if tool.signal.aborted:
                await tool.send("tool.abort")

    def _on_tool_settled(self, settled: asyncio.Future[ToolMachine]) -> None:
        """Calls that settle in the same loop iteration are reported as one event: the first
        schedules the report, which runs after the done-callbacks already queued."""
        self._just_settled.append(settled.result())
        if len(self._just_settled) == 1:
            self._spawn(self._report_settled())

    async def _report_settled(self) -> None:
        tools, self._just_settled = self._just_settled, []
        calls = tuple(
            _Settled(tool.original_id, tool.call.name, tool.outcome, tool.final_result)
            for tool in tools
        )
        await self.send("tool.settled", calls=calls)
        for tool in tools:
            if self.tools.get(tool.original_id) is not tool:
                self._spare_tools.append(tool)  # settled and let go of: the next call reuses it

    def _on_detach(self, call_id: str, ack: str) -> None:
        # Called synchronously from a runner: queue the event now, process it in a task.
        self._spawn(self.send("tool.detached", call_id=call_id, ack=ack))

    async def settle_tools(self, calls: tuple[_Settled, ...]) -> None:
        for_turn: list[tuple[str, ToolResult]] = []
        for call in calls:
            call_id, name, outcome, result = call.call_id, call.name, call.outcome, call.result
            if call_id in self.background:
                self.background.discard(call_id)
                self.tools.pop(call_id, None)
                self._emit(ToolSettled(call_id, name, _final(outcome), result, background=True))
                self.notifications.append(async_tool_notification(call_id, name, outcome, result))
            elif call_id in self.turn_tools:
                self.turn_tools.discard(call_id)
                self.tools.pop(call_id, None)
                self._emit(ToolSettled(call_id, name, _final(outcome), result))
                for_turn.append((call_id, result))
        if for_turn and self.turn is not None:
            await self.turn.send("tool.settled", results=tuple(for_turn))

    async def detach_tool(self, call_id: str, ack: str) -> None:
        if call_id not in self.turn_tools:
            return
        self.turn_tools.discard(call_id)
        self.background.add(call_id)
        if self.turn is not None:
            name = self.tools[call_id].call.name
            await self.turn.send("tool.detached", call_id=call_id, ack=ack, name=name)

    async def abort_one_tool(self, call_id: str, reason: str = "aborted") -> None:
        tool = self.tools.get(call_id)
        if tool is not None:
            tool.signal.abort(reason)
            await tool.send("tool.abort")

    async def _stop_tool(self, call_id: str, reason: str) -> None:
        tool = self.tools.pop(call_id, None)
        if tool is not None:
            tool.signal.abort(reason)
            if not tool.is_terminated:
                await tool.send("tool.stop")

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

    def _spawn(self, work: Any) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

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


def _final(outcome: ToolState) -> Any:
    return outcome if outcome in ("succeeded", "failed", "aborted") else "aborted"


class Agent:
    """The kernel's facade: commands become agent-machine events; views read its context."""

    def __init__(
        self,
        requester: Requester,
        tool_runner: ToolRunner,
        emit: Emit,
        *,
        options: KernelOptions = KernelOptions(),
        tool_hooks: ToolHooks | None = None,
        prompt_gate: PromptGate | None = None,
        history: Sequence[HistoryEntry] = (),
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        # Errors the machines caught (should stay empty), each also handed to `on_error`.
        self.errors = ErrorLog(on_error)
        self._args = (requester, tool_runner, emit)
        self._options = options
        self._hooks = tool_hooks
        self._gate = prompt_gate
        self._history = tuple(history)
        self._machine: AgentMachine | None = None

    @property
    def _m(self) -> AgentMachine:
        if self._machine is None:
            raise RuntimeError("Agent.start() must be awaited first")
        return self._machine

    async def start(self) -> None:
        """Build and activate the machine inside the running loop."""
        requester, runner, emit = self._args
        self._machine = AgentMachine(
            requester,
            runner,
            guarded_emit(emit, self.errors),
            self.errors,
            options=self._options,
            hooks=self._hooks,
            gate=self._gate,
            history=self._history,
        )
        await self._machine.activate()

    # -- commands --------------------------------------------------------------------------------

    async def submit(self, entry: HistoryEntry) -> None:
        await self._m.send("input.submit", entry=entry)

    async def notify(self, entry: HistoryEntry) -> None:
        await self._m.send("input.notify", entry=entry)

    async def remind(self, key: str, entry: HistoryEntry) -> None:
        await self._m.send("input.remind", reminder_key=key, entry=entry)

    async def steer(self, prompt_ids: Sequence[str]) -> bool:
        wanted = set(prompt_ids)
        if not any(item.meta.prompt_id in wanted for item in self._m.queue):
            return False
        await self._m.send("input.steer", prompt_ids=tuple(prompt_ids))
        return True

    async def cancel_queued(self, prompt_id: str) -> bool:
        if not self._queued(prompt_id):
            return False
        await self._m.send("input.cancel", prompt_id=prompt_id)
        return True

    async def edit_queued(self, prompt_id: str, message: Message) -> bool:
        if not self._queued(prompt_id):
            return False
        await self._m.send("input.edit", prompt_id=prompt_id, message=message)
        return True

    async def move_queued(self, prompt_id: str, offset: int) -> bool:
        before = [item.meta.prompt_id for item in self._m.queue]
        if prompt_id not in before:
            return False
        await self._m.send("input.move", prompt_id=prompt_id, offset=offset)
        return [item.meta.prompt_id for item in self._m.queue] != before

    async def abort(self, reason: str = "user_cancelled") -> None:
        """Abort the running turn; a second call while it is aborting forces the end."""
        await self._m.send("input.abort", reason=reason)

    async def abort_tool(self, call_id: str, reason: str) -> bool:
        tool = self._m.tools.get(call_id)
        if tool is None or tool.is_terminated:
            return False
        await self._m.send("input.abort_tool", call_id=call_id, reason=reason)
        return True

    # Not driven by the product yet (kept with the seed's machine and covered by the kernel
    # tests): pause/continue at the next drain point, and reset to a new history.

    async def pause(self) -> None:
        await self._m.send("input.pause")

    async def resume(self) -> None:
        await self._m.send("input.continue")

    async def reset(self, history: Sequence[HistoryEntry]) -> None:
        await self._m.send("input.reset", history=tuple(history), reason="reset")

    async def close(self) -> None:
        if not self._m.is_terminated:
            await self._m.send("input.close", reason="closed")

    async def idle(self) -> None:
        """Resolves when no turn runs and no work is pending (or the agent is closed)."""
        machine = self._m
        while not (machine.is_terminated or machine.settled):
            await machine.wait_changed()

    def _queued(self, prompt_id: str) -> bool:
        return any(item.meta.prompt_id == prompt_id for item in self._m.queue)

    # -- views -----------------------------------------------------------------------------------

    @property
    def history(self) -> tuple[HistoryEntry, ...]:
        return tuple(self._m.committed)

    @property
    def queue(self) -> tuple[HistoryEntry, ...]:
        return tuple(self._m.queue)

    @property
    def notifications(self) -> tuple[HistoryEntry, ...]:
        return tuple(self._m.notifications)

    @property
    def reminders(self) -> dict[str, HistoryEntry]:
        return dict(self._m.reminders)

    @property
    def paused(self) -> bool:
        return self._m.paused

    @property
    def state(self) -> str:
        """The agent's active state, dotted: "idle.ready", "running.aborting", "closed"."""
        return self._m.state_path

    @property
    def turn_state(self) -> str | None:
        turn = self._m.turn
        if turn is None:
            return None
        return turn.state_path.rsplit(".", 1)[-1]

    @property
    def active_turn_id(self) -> int | None:
        return self._m.active_turn_id

    @property
    def next_turn_id(self) -> int:
        """For the kernel tests (the product does not read it)."""
        return self._m.turn_id

    @property
    def step(self) -> int:
        turn = self._m.turn
        return turn.step if turn is not None else 0

    @property
    def tools(self) -> dict[str, tuple[str, ToolState]]:
        return {call_id: (t.call.name, t.outcome) for call_id, t in self._m.tools.items()}

    @property
    def background(self) -> tuple[str, ...]:
        return tuple(sorted(self._m.background))
