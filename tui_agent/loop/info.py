"""What the loop says about itself (`LoopInfo`: provider, model, session, mode), apart from the
rest of its surface (`api.py`, which re-exports it): the full-screen app builds one for its
first frame, before the loop, its events and the vocabulary's pydantic models are loaded."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.lazy_dataclass import dataclass

if TYPE_CHECKING:
    from tui_agent.tools import Sandbox
    from tui_agent.vocab import ApprovalMode


@dataclass(frozen=True)
class LoopInfo:
    provider: str  # "openai" | "anthropic" | "scripted"
    model: str
    context_window: int
    approval_mode: ApprovalMode
    session_id: str
    workspace: str
    demo: bool  # the built-in scripted demo is running (no key configured)
    notices: tuple[str, ...] = ()  # what opening the session found for the user (damaged lines)
    # The commands' OS sandbox (it travels to sub-agents with the info); None: not told (tests).
    sandbox: Sandbox | None = None
