"""`KernelOptions`: the knobs of the three machines, with the seed's defaults.

The retry numbers are those of docs/loop-spec.md §8."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

from tui_agent.kernel.ports import Random, Sleep


@dataclass(frozen=True)
class KernelOptions:
    max_steps: int = 0  # per turn; 0 = unlimited
    max_attempts_per_step: int = 10
    abort_timeout_s: float = 10.0  # agent: second phase of abort
    abort_grace_s: float = 2.5  # turn: grace for tools after abort
    provider: str = ""  # named in empty-response messages
    model: str = ""
    sleep: Sleep = asyncio.sleep
    random: Random = random.random
