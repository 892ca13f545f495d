"""Record what the real loop emits for a scene's script, made repeatable.

`record(steps, play)` opens the real service (real machines, scheduler and tools) on the
scripted provider in a fresh workspace, lets `play` drive it (submit, steer, remind) until the
moment worth looking at (the event it returns), then stops the loop and returns the events up to
that one, with what varies between runs fixed: every timestamp is `T0`, generated ids
(approval requests, the hex tail of the library's invoke events) become stable ones, and the
temporary workspace is shown as the fake loop's. Scenes replay these events into the app, so
a picture shows what the loop really does, and changes when the loop does.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.ui.fake_loop import WORKSPACE
from tui_agent.loop import events as ev
from tui_agent.loop.api import LoopApi
from tui_agent.session import LoopConfig, open_loop
from tui_agent.vocab import ApprovalMode

T0 = 1_764_450_000.0  # the fixed "now" of every scene
SHOWN_WORKSPACE = str(WORKSPACE)
_INVOKE_TAIL = re.compile(r"(\.invoke\.[\w.]+?)\.[0-9a-f]{6,}$")
WAIT_FOR_GO = "while [ ! -e go ]; do sleep 0.05; done"  # a shell call that runs until stopped
RECORD_TIMEOUT_S = 30.0


class Recording:
    """What a scene's driver sees: the loop, the events so far, and a way to wait for one."""

    def __init__(self, loop: LoopApi, workspace: Path) -> None:
        self.loop = loop
        self.workspace = workspace
        self.events: list[ev.LoopEvent] = []
        self._changed = asyncio.Event()
        loop.subscribe(self._on_event)

    def _on_event(self, event: ev.LoopEvent) -> None:
        self.events.append(event)
        self._changed.set()

    async def wait_for(self, condition: Callable[[ev.LoopEvent], bool]) -> ev.LoopEvent:
        """The first event (already seen or still to come) for which `condition` holds."""
        seen = 0
        while True:
            for event in self.events[seen:]:
                if condition(event):
                    return event
            seen = len(self.events)
            self._changed.clear()
            await asyncio.wait_for(self._changed.wait(), RECORD_TIMEOUT_S)


Play = Callable[[Recording], Awaitable[ev.LoopEvent]]  # returns the last event to show


async def record(
    steps: list[dict[str, Any]],
    play: Play,
    *,
    approval_mode: ApprovalMode = "yolo",
    files: dict[str, str] | None = None,
) -> list[ev.LoopEvent]:
    """The events of `steps` as `play` drives them, up to the moment `play` returns."""
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder) / "project"
        workspace.mkdir()
        for name, text in (files or {}).items():
            path = workspace / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        script = Path(folder) / "script.json"
        script.write_text(json.dumps({"steps": steps}), encoding="utf-8")
        loop = await open_loop(
            LoopConfig(
                workspace=workspace,
                provider="scripted",
                script=str(script),
                approval_mode=approval_mode,
            )
        )
        recording = Recording(loop, workspace)
        try:
            last = await play(recording)
            events = recording.events[: recording.events.index(last) + 1]
        finally:
            await loop.cancel(force=True)
            await loop.close()
        return _fixed(events, str(workspace))


def _fixed(events: list[ev.LoopEvent], workspace: str) -> list[ev.LoopEvent]:
    request_ids: dict[str, str] = {}
    fixed = []
    for event in events:
        data = event.model_dump()
        data["ts"] = T0
        if "request_id" in data:
            data["request_id"] = request_ids.setdefault(
                data["request_id"], f"r{len(request_ids) + 1}"
            )
        if isinstance(event, ev.MachineTransition):
            data["event"] = _INVOKE_TAIL.sub(r"\1.0000abcd", data["event"])
        fixed.append(type(event).model_validate(_shown(data, workspace)))
    return fixed


def _shown(value: Any, workspace: str) -> Any:
    if isinstance(value, str):
        return value.replace(workspace, SHOWN_WORKSPACE)
    if isinstance(value, dict):
        return {k: _shown(v, workspace) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_shown(v, workspace) for v in value)
    return value
