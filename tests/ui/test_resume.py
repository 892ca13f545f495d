"""A resumed session shows what was on screen before it was closed.

The person works through a session on the scripted model (a retried attempt, an edit with its
diff, a call they stop, a turn that fails, turns they interrupt), quits, and comes back with
`--continue`: the screen, transcript and status bar alike, must be the same picture.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.ui.real_loop import until
from tests.ui.test_flows import send, shell, tool_running
from tui_agent.loop.api import LoopApi
from tui_agent.session import LoopConfig, open_loop
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.view_model import MarkerBlock, TextBlock, ToolBlock

USAGE = {"input_other": 1200, "output": 300}
STEPS: list[dict[str, Any]] = [
    # 1: a refused attempt, retried; then an edit, shown with its diff
    {"error": {"kind": "rate_limit", "message": "slow down", "status": 429, "retry_after_s": 0.1}},
    {
        "text": "Fixing the greeting.",
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {"path": "hello.py", "old_string": "helo", "new_string": "hello"},
            }
        ],
        "usage": USAGE,
    },
    {"text": "Done.", "usage": USAGE},
    # 2: the person stops the slow call; the turn goes on
    {"tool_calls": [shell("sleep 30"), shell("echo quick")], "usage": USAGE},
    {"text": "Carried on without it.", "usage": USAGE},
    # 3: the provider refuses: the turn fails
    {"error": {"kind": "auth", "message": "bad key", "status": 401}},
    # 4: the person interrupts a running tool
    {"text": "Waiting.", "tool_calls": [shell("sleep 30")], "usage": USAGE},
    # 5: the person interrupts a streaming answer; what streamed so far stays
    {"text": "word " * 400, "chunk_delay_s": 0.02, "chunk_chars": 5},
]


def config(workspace: Path, *, resume: bool) -> LoopConfig:
    script = workspace.parent / "script.json"
    script.write_text(json.dumps({"steps": STEPS}), encoding="utf-8")
    return LoopConfig(
        workspace=workspace,
        provider="scripted",
        script=str(script),
        approval_mode="yolo",
        continue_latest=resume,
    )


def idle(app: TuiAgentApp) -> bool:
    return not app.vm.busy


async def screen_after(loop: LoopApi, drive: Any) -> str:
    app = TuiAgentApp(loop)
    try:
        async with app.run_test(size=(120, 60)) as pilot:
            await drive(app, pilot)
            await until(pilot, lambda: app.transcript.settled)
            app.set_focus(None)  # no cursor, no focused block: the keys pressed are not the picture
            app.transcript.action_follow()
            await pilot.pause()
            await pilot.wait_for_scheduled_animations()
            await pilot.pause()
            # The SVG's class prefix is a hash that varies between runs; the picture does not.
            screen = re.sub(r"terminal-\d+", "terminal", app.export_screenshot())
            await pilot.press("ctrl+q")  # quit as a person does: the log is sealed first
            await until(pilot, lambda: not app.is_running)
            return screen
    finally:
        await app.loop.close()


async def work_through_a_session(app: TuiAgentApp, pilot: Any) -> None:
    await send(pilot, "fix the greeting")
    await until(pilot, lambda: idle(app) and any(isinstance(b, ToolBlock) for b in app.vm.blocks))
    await until(pilot, lambda: idle(app) and len(app.vm.blocks) >= 4)

    await send(pilot, "run both")
    await until(pilot, lambda: tool_running(app))
    await pilot.press("ctrl+t")
    slow = next(r.call_id for r in app.vm.tools.values() if "sleep" in r.summary)
    while app.tools_pane.highlighted_call_id != slow:
        await pilot.press("down")
    await pilot.press("x")
    await until(pilot, lambda: idle(app) and app.vm.blocks[-1].__class__.__name__ == "TextBlock")
    app.prompt_input.focus()

    await send(pilot, "try again")
    await until(pilot, lambda: idle(app) and isinstance(app.vm.blocks[-1], MarkerBlock))

    await send(pilot, "wait for it")
    await until(pilot, lambda: tool_running(app))
    await pilot.press("escape")
    await until(pilot, lambda: idle(app) and isinstance(app.vm.blocks[-1], MarkerBlock))

    await send(pilot, "talk")
    await until(pilot, lambda: isinstance(app.vm.blocks[-1], TextBlock))
    await pilot.press("escape")
    await until(pilot, lambda: idle(app) and isinstance(app.vm.blocks[-1], MarkerBlock))


async def nothing(app: TuiAgentApp, pilot: Any) -> None:
    await until(pilot, lambda: bool(app.vm.blocks))


@pytest.mark.timeout(60)
async def test_continue_shows_the_screen_the_person_left(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "hello.py").write_text('print("helo")\n', encoding="utf-8")

    before = await screen_after(
        await open_loop(config(workspace, resume=False)), work_through_a_session
    )
    after = await screen_after(await open_loop(config(workspace, resume=True)), nothing)

    assert after == before
    for seen in ("+1 −1", "turn failed", "interrupted", "stopped", "retried"):
        assert seen in before or seen.replace(" ", "&#160;") in before, seen
