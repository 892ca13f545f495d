"""A point-in-time view of the loop for observers: states, queue, pending work, live tools."""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from tui_agent.lazy_dataclass import dataclass

if TYPE_CHECKING:  # the app builds a snapshot for its first frame, before pydantic loads
    from tui_agent.vocab import PlanItem


@dataclass(frozen=True)
class QueuedPrompt:
    prompt_id: str
    text: str


@dataclass(frozen=True)
class PendingNotification:
    source: str  # notify | reminder | async-tool | steer
    text: str
    key: str | None = None
    prompt_ids: tuple[str, ...] = ()  # a steer: the prompts merged into it


@dataclass(frozen=True)
class LiveTool:
    call_id: str
    name: str
    state: str
    started_at: float
    output_tail: str = ""


@dataclass(frozen=True)
class LoopSnapshot:
    agent_state: str  # idle | running | aborting | closing ...
    turn_state: str | None  # gating | requesting | retrying | running | aborting | draining
    active_turn_id: int | None
    step: int
    paused: bool
    queue: tuple[QueuedPrompt, ...] = ()
    notifications: tuple[PendingNotification, ...] = ()
    tools: tuple[LiveTool, ...] = ()
    machine_states: dict[str, str] = field(default_factory=dict)  # machine id -> state path
    plan: tuple[PlanItem, ...] = ()  # the model's plan (`todo_write`)
