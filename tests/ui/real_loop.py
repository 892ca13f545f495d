"""The real loop service on the scripted provider, for Pilot tests of whole flows.

`scripted_loop(steps, workspace=...)` writes the steps as a script (the format documented in
`tui_agent/llm/_scripted.py`) and opens the service as the command line would. Nothing in a
flow waits on the clock: `gated(name)` is a shell call that runs until the test calls
`release(workspace, name)`, and a step listed in `holds` streams its first text and then waits
for the test to set that event (such a loop is wired with `build_loop` around the scripted
provider, the way `open_loop` wires it). `until` waits, frame by frame, for something the user
would see.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tui_agent.context import EventLog
from tui_agent.llm import ScriptedProvider
from tui_agent.loop.api import LoopApi, LoopInfo
from tui_agent.loop.factory import build_loop
from tui_agent.session import LoopConfig, open_loop
from tui_agent.vocab import ApprovalMode, LLMRequest, StreamEvent, TextDelta


class _HoldingProvider:
    """Plays the scripted steps; request n (from 0) in `holds` pauses after its first text."""

    name = "scripted"

    def __init__(self, inner: ScriptedProvider, holds: Mapping[int, asyncio.Event]) -> None:
        self.model = inner.model
        self._inner = inner
        self._holds = holds
        self._requests = 0

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        hold = self._holds.get(self._requests)
        self._requests += 1
        async for event in self._inner.stream(request):
            yield event
            if hold is not None and isinstance(event, TextDelta):
                await hold.wait()
                hold = None

    async def aclose(self) -> None:
        await self._inner.aclose()


async def scripted_loop(
    steps: list[dict[str, Any]],
    *,
    workspace: Path,
    approval_mode: ApprovalMode = "yolo",
    resume: bool = False,
    holds: Mapping[int, asyncio.Event] | None = None,
) -> LoopApi:
    """`resume`: continue the workspace's latest session, as `--continue` does."""
    if holds:
        return await _holding_loop(steps, workspace, approval_mode, holds)
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


async def _holding_loop(
    steps: list[dict[str, Any]],
    workspace: Path,
    approval_mode: ApprovalMode,
    holds: Mapping[int, asyncio.Event],
) -> LoopApi:
    provider = _HoldingProvider(ScriptedProvider.from_steps(steps), holds)
    state = workspace.parent / f"{workspace.name}-session"
    state.mkdir(exist_ok=True)
    return await build_loop(
        provider=provider,
        info=LoopInfo(
            provider="scripted",
            model=provider.model,
            context_window=128_000,
            approval_mode=approval_mode,
            session_id="flow",
            workspace=str(workspace),
            demo=False,
        ),
        workspace=workspace,
        spill_dir=state / "spill",
        log=EventLog(state / "events.jsonl"),
        system_prompt=lambda tools: "You are a test agent.",
    )


def gated(name: str) -> dict[str, Any]:
    """A shell call that runs until `release(workspace, name)` (it polls for a file)."""
    command = f"until [ -e {name}.go ]; do sleep 0.01; done; echo {name} done"
    return {"name": "shell", "arguments": {"command": command}}


def release(workspace: Path, name: str) -> None:
    (workspace / f"{name}.go").touch()


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
