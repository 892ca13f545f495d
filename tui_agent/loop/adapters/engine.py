"""The engine adapter: hosts the kernel's agent machine and is the loop's only handle on it.

`Engine` builds the kernel `Agent` (private: the loop reaches it only through the commands and
views below), fills its ports from the turn policy (`EngineListener`: the prompt gate and the
after-tool hook) and hands every emission to `Translator` (`adapters.translator`), which writes
the records, publishes the loop events and tells the policy what happened. The service never
sees kernel types; this package is the only code that imports the kernel.

Parts: `listener.py` what the policy is told, `translator.py` emissions -> records and events
(with the live-tool table snapshots read), `_steps.py` the step records of the log.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tui_agent.kernel import Agent, KernelOptions
from tui_agent.kernel.ports import Deny, GateVerdict, Proceed, Requester, ToolHooks, ToolRunner
from tui_agent.loop.adapters.journal import Journal
from tui_agent.loop.adapters.listener import EngineListener
from tui_agent.loop.adapters.translator import Translator
from tui_agent.vocab import HistoryEntry, Message, ToolCall, ToolResult

if TYPE_CHECKING:
    from tui_agent.loop.snapshot import LiveTool, PendingNotification, QueuedPrompt


class _PromptGate:
    """Fills the kernel's PromptGate port with the listener's `gate_prompt`."""

    def __init__(self, listener: EngineListener) -> None:
        self._listener = listener

    async def __call__(self, entry: HistoryEntry) -> GateVerdict:
        block, message = await self._listener.gate_prompt(entry.message)
        return GateVerdict(block=block, message=None if message is entry.message else message)


class AfterToolHook(ToolHooks):
    """Fills the kernel's ToolHooks port: calls proceed as they are (no preparing phase);
    results pass the listener, at once when it can take them synchronously (most can: then a
    call settles in the microstep its runner returns in)."""

    prepares = False

    def __init__(self, listener: EngineListener) -> None:
        self._listener = listener

    async def prepare(self, call: ToolCall) -> Proceed | Deny:
        return Proceed(call)

    def finish_at_once(self, call: ToolCall, result: ToolResult) -> ToolResult | None:
        return self._listener.finish_tool_at_once(call, result)

    async def finish(self, call: ToolCall, result: ToolResult) -> ToolResult:
        return await self._listener.finish_tool(call, result)


class Engine:
    def __init__(
        self,
        *,
        requester: Requester,
        tool_runner: ToolRunner,
        journal: Journal,
        listener: EngineListener,
        options: KernelOptions,
        history: Sequence[HistoryEntry] = (),
        clock: Callable[[], float],
    ) -> None:
        self._translator = Translator(journal, listener, clock)
        self._agent = Agent(
            requester,
            tool_runner,
            self._translator,
            options=options,
            prompt_gate=_PromptGate(listener),
            tool_hooks=AfterToolHook(listener),
            history=history,
            on_error=listener.internal_error,
        )

    # -- views -------------------------------------------------------------------------------
    @property
    def step(self) -> int:
        """The running kernel turn's step (its turn machine counts them; 0 between turns)."""
        return self._agent.step

    @property
    def active_turn_id(self) -> int | None:
        return self._translator.turn_id

    @property
    def agent_state(self) -> str:
        return self._agent.state

    @property
    def turn_state(self) -> str | None:
        return self._agent.turn_state

    @property
    def paused(self) -> bool:
        return self._agent.paused

    @property
    def history(self) -> tuple[HistoryEntry, ...]:
        return self._agent.history

    @property
    def waiting(self) -> bool:
        """A new prompt would wait: the agent is paused or prompts are queued already."""
        return self.paused or self.has_queue

    @property
    def has_queue(self) -> bool:
        return bool(self._agent.queue)

    @property
    def errors(self) -> list[BaseException]:
        """What the kernel caught and kept (the tests check it stays empty)."""
        return self._agent.errors

    def queue(self) -> tuple[QueuedPrompt, ...]:
        # The views a snapshot reads load `loop.snapshot` at first use: a one-shot takes none.
        from tui_agent.loop.snapshot import QueuedPrompt

        return tuple(
            QueuedPrompt(entry.meta.prompt_id or "", entry.message.text)
            for entry in self._agent.queue
        )

    def notifications(self) -> tuple[PendingNotification, ...]:
        from tui_agent.loop.snapshot import PendingNotification

        pending = [
            PendingNotification(
                _notification_source(entry), entry.message.text, prompt_ids=entry.meta.prompt_ids
            )
            for entry in self._agent.notifications
        ]
        pending += [
            PendingNotification("reminder", entry.message.text, key)
            for key, entry in self._agent.reminders.items()
        ]
        return tuple(pending)

    def live_tools(self) -> tuple[LiveTool, ...]:
        return self._translator.live_tools()

    def machine_states(self) -> dict[str, str]:
        return self._translator.machine_states()

    # -- commands ----------------------------------------------------------------------------
    async def start(self) -> None:
        await self._agent.start()

    async def submit(self, entry: HistoryEntry) -> None:
        await self._agent.submit(entry)

    async def steer(self, prompt_ids: Sequence[str]) -> bool:
        return await self._agent.steer(prompt_ids)

    async def notify(self, entry: HistoryEntry) -> None:
        await self._agent.notify(entry)

    async def remind(self, key: str, entry: HistoryEntry) -> None:
        await self._agent.remind(key, entry)

    async def cancel_queued(self, prompt_id: str) -> bool:
        return await self._agent.cancel_queued(prompt_id)

    async def edit_queued(self, prompt_id: str, message: Message) -> bool:
        return await self._agent.edit_queued(prompt_id, message)

    async def move_queued(self, prompt_id: str, offset: int) -> bool:
        return await self._agent.move_queued(prompt_id, offset)

    async def abort(self, reason: str) -> None:
        await self._agent.abort(reason)

    async def abort_tool(self, call_id: str, reason: str) -> bool:
        return await self._agent.abort_tool(call_id, reason)

    async def idle(self) -> None:
        await self._agent.idle()

    async def close(self) -> None:
        await self._agent.close()


def _notification_source(entry: HistoryEntry) -> str:
    if entry.meta.source == "async-tool":
        return "async-tool"
    if entry.meta.in_turn:
        return "steer"
    return "notify"


__all__ = ["AfterToolHook", "Engine", "KernelOptions"]
