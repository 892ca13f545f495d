"""The agent machine's tools: a step's calls spawned, their ends reported, detached, stopped.

`AgentTools` is the base of `AgentMachine` (a chart with no states of its own, like
`KernelChart`): it owns every tool machine of one agent, the calls of the running turn and the
calls left running in the background, and the spare machines a new call reuses. The agent's
transitions name its methods (`settle_tools`, `detach_tool`, `abort_one_tool`) as actions.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tui_agent.kernel.chart import Emit, KernelChart
from tui_agent.kernel.events import ToolSettled, ToolState
from tui_agent.kernel.inputs import async_tool_notification
from tui_agent.kernel.ports import ToolHooks, ToolRunner
from tui_agent.kernel.tool import ToolMachine
from tui_agent.kernel.turn import TurnMachine
from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import AbortSignal, HistoryEntry, ToolCall, ToolResult


@dataclass(frozen=True)
class _Settled:
    """One call's outcome as `tool.settled` carries it."""

    call_id: str
    name: str
    outcome: ToolState
    result: ToolResult


class AgentTools(KernelChart):
    # The agent machine's states and context these methods read (its class and `__init__`).
    live: Any
    turn: TurnMachine | None
    notifications: list[HistoryEntry]
    abort_reason: str | None
    _runner: ToolRunner
    _hooks: ToolHooks | None
    _root: AbortSignal
    _turn_scope: AbortSignal

    def __init__(self, emit: Emit, machine_id: str, errors: list[BaseException]) -> None:
        self.tools: dict[str, ToolMachine] = {}
        self._spare_tools: list[ToolMachine] = []
        self._just_settled: list[ToolMachine] = []  # reported together as one `tool.settled`
        self.turn_tools: set[str] = set()
        self.background: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        super().__init__(emit, machine_id, errors)

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

    def _spawn(self, work: Any) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _final(outcome: ToolState) -> Any:
    return outcome if outcome in ("succeeded", "failed", "aborted") else "aborted"
