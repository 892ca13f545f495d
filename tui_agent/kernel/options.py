"""`KernelOptions`: the knobs of the three machines, with the seed's defaults.

The retry numbers are those of docs/loop-spec.md §8. The loop's `LoopOptions` is this class
(`loop/service.py`), so a default is written once and nothing is copied field by field."""

from __future__ import annotations

import asyncio
import random
import time

from tui_agent.kernel.ports import Clock, Random, Sleep
from tui_agent.kernel.retry import RetryPolicy
from tui_agent.lazy_dataclass import dataclass


@dataclass(frozen=True)
class KernelOptions:
    max_steps: int = 0  # steps in a row without new input; 0 = unlimited (the turn enforces it)
    max_attempts_per_step: int = 10
    retry_budget_s: float = 60.0  # the waits between one step's attempts add up to at most this
    max_retry_after_s: float = 60.0  # a longer Retry-After fails the step, saying when to retry
    abort_timeout_s: float = 10.0  # agent: second phase of abort
    abort_grace_s: float = 2.5  # turn: grace for tools after abort
    provider: str = ""  # named in empty-response messages
    model: str = ""
    sleep: Sleep = asyncio.sleep
    random: Random = random.random
    clock: Clock = time.time  # wall time, only to say when a refused retry may be made

    @property
    def tool_abort_grace_s(self) -> float:
        """How long a running tool may go on after an abort before the executor cancels it:
        four fifths of the turn's wait (2.0 s of 2.5 s by default), so that the tool's own
        aborted result, with its output so far, reaches the turn before the turn stops waiting
        and fills in a bare "aborted" for it."""
        return self.abort_grace_s * 4 / 5

    @property
    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            max_attempts=self.max_attempts_per_step,
            budget_s=self.retry_budget_s,
            max_retry_after_s=self.max_retry_after_s,
        )
