"""A loop turn and the prompts it runs, as the turn policy keeps them.

`SubmittedPrompt` is the handle `submit` returns (its state, and its result once its turn
settled); `Turn` is one loop turn: the kernel turns bound to it (an error handler's retry
continues it in a new one), its prompts and what its steps and hooks decided.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import field
from typing import Any

from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop import events as ev
from tui_agent.loop.api import PromptState
from tui_agent.loop.turn_model import TurnModel
from tui_agent.vocab import AbortSignal, TurnError


class SubmittedPrompt:
    def __init__(
        self,
        prompt_id: str,
        text: str,
        allowed_tools: Sequence[str] | None = None,
        model: TurnModel | None = None,
    ) -> None:
        self._id = prompt_id
        self.text = text
        self.allowed_tools = tuple(allowed_tools) if allowed_tools is not None else None
        self.model = model  # the model it asked its turn to run on
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
class Turn:
    turn_id: int
    started_at: float
    prompts: list[SubmittedPrompt] = field(default_factory=list)
    # Steps are counted by the kernel's turn machine only (`Engine.step`, `StepFacts.step`);
    # a loop turn adds the steps of the machine turns before this one (error-handler retries).
    steps: int = 0  # step_base + the kernel's number of the last finished step
    step_base: int = 0  # steps of earlier machine turns (error-handler continuations)
    truncated: bool = False
    filtered: bool = False
    stop_requested: bool = False
    stop_reason: str | None = None
    failed_step: TurnError | None = None
    abort_reason: str | None = None
    continuing: bool = False  # an error handler asked for a retry; the next machine turn binds
    stop_continued: bool = False  # an `on_turn_stop` handler kept the turn going
    last_text: str = ""
    after_step: asyncio.Task[None] | None = None  # the last step's `on_did_finish_step` hooks


async def until_done_or_aborted(work: asyncio.Future[None], signal: AbortSignal) -> None:
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
