"""The real loop service on the scripted provider, for Pilot tests of whole flows.

`scripted_loop(steps, workspace=...)` writes the steps as a script (the format documented in
`tui_agent/llm/_scripted.py`) and opens the service as the command line would; `until` waits,
frame by frame, for something the user would see.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tui_agent.loop.api import ApprovalMode, LoopApi
from tui_agent.session import LoopConfig, open_loop
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.widgets.approval_bar import GUARD_S


async def scripted_loop(
    steps: list[dict[str, Any]],
    *,
    workspace: Path,
    approval_mode: ApprovalMode = "yolo",
    resume: bool = False,
) -> LoopApi:
    """`resume`: continue the workspace's latest session, as `--continue` does."""
    script = workspace.parent / f"{workspace.name}-script.json"
    script.write_text(json.dumps({"steps": steps}), encoding="utf-8")
    return await open_loop(
        LoopConfig(
            workspace=workspace,
            provider="scripted",
            script=str(script),
            approval_mode=approval_mode,
            continue_latest=resume,
        )
    )


# Frames to wait before giving up: generous, and a failure here names the wait, whereas a test
# stuck inside the app's loop is not always interrupted by pytest-timeout.
MAX_FRAMES = 1500


async def until(pilot: Pilot[Any], condition: Callable[[], bool]) -> None:
    """Let the app run until `condition` holds."""
    for _ in range(MAX_FRAMES):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("the app never reached the expected state")


class StepClock:
    """Wall time, plus what a test adds: lets the approval box's guard pass without waiting."""

    def __init__(self) -> None:
        self.added = 0.0

    def __call__(self) -> float:
        return time.time() + self.added


async def approval_shown(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, TuiAgentApp) and isinstance(app.clock, StepClock)
    await until(pilot, lambda: bool(app.vm.approvals) and app.approval_bar.display)
    app.clock.added += GUARD_S
