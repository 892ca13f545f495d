"""`Agent`, the kernel's facade: typed commands that become agent-machine events, and views
that read the machine's context. The adapters drive the kernel only through it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tui_agent.kernel.agent import AgentMachine
from tui_agent.kernel.chart import Emit, ErrorLog, guarded_emit
from tui_agent.kernel.events import ToolState
from tui_agent.kernel.options import KernelOptions
from tui_agent.kernel.ports import PromptGate, Requester, ToolHooks, ToolRunner
from tui_agent.vocab import HistoryEntry, Message


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
