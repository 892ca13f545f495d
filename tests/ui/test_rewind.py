"""/undo, /rewind and Esc Esc in the app, on the real loop and the scripted model."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from textual import events
from textual.pilot import Pilot

from tests.ui.real_loop import until
from tests.ui.test_flows import send
from tui_agent.session import LoopConfig, open_loop
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.rewind_screen import RestoreChoice, RewindPicker
from tui_agent.ui.run import session_hooks
from tui_agent.ui.view_model import MarkerBlock, UserBlock
from tui_agent.ui.widgets.prompt_input import unfolded


def write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


STEPS = [
    write("a.txt", "first\n"),
    {"text": "wrote it"},
    write("a.txt", "second\n"),
    {"text": "ok"},
]


@asynccontextmanager
async def app_in(
    tmp_path: Path, resume: str | None = None
) -> AsyncIterator[tuple[TuiAgentApp, Pilot[None], Path]]:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": STEPS}), encoding="utf-8")
    config = LoopConfig(
        workspace=workspace,
        provider="scripted",
        script=str(script),
        approval_mode="yolo",
        resume=resume,
    )
    app = TuiAgentApp(await open_loop(config), hooks=session_hooks(config))
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            yield app, pilot, workspace
    finally:
        await app.loop.close()


def prompts(app: TuiAgentApp) -> list[str]:
    return [b.text for b in app.vm.blocks if isinstance(b, UserBlock)]


async def two_turns(app: TuiAgentApp, pilot: Pilot[None]) -> None:
    await send(pilot, "one")
    await until(
        pilot, lambda: not app.vm.busy and len(prompts(app)) == 1 and len(app.vm.blocks) > 2
    )
    await send(pilot, "two")
    await until(
        pilot, lambda: not app.vm.busy and app.vm.blocks[-1].__class__.__name__ == "TextBlock"
    )


async def test_undo_puts_back_the_last_turns_file_and_says_which(tmp_path: Path) -> None:
    async with app_in(tmp_path) as (app, pilot, workspace):
        await two_turns(app, pilot)
        await send(pilot, "/undo")
        await until(pilot, lambda: isinstance(app.vm.blocks[-1], MarkerBlock))
        assert (workspace / "a.txt").read_text() == "first\n"
        assert app.vm.blocks[-1].text == "restored a.txt"


async def test_undo_asks_before_overwriting_a_file_changed_since(tmp_path: Path) -> None:
    async with app_in(tmp_path) as (app, pilot, workspace):
        await two_turns(app, pilot)
        (workspace / "a.txt").write_text("mine\n", encoding="utf-8")
        await send(pilot, "/undo")
        await until(pilot, lambda: isinstance(app.screen, RestoreChoice))
        await pilot.press("escape")
        await pilot.pause()
        assert (workspace / "a.txt").read_text() == "mine\n"


async def test_escape_twice_rewinds_code_and_conversation_and_refills_the_prompt(
    tmp_path: Path,
) -> None:
    async with app_in(tmp_path) as (app, pilot, workspace):
        await two_turns(app, pilot)
        await pilot.press("escape", "escape")
        await until(pilot, lambda: isinstance(app.screen, RewindPicker))
        await pilot.press("up", "enter")  # the latest is highlighted: go to the first prompt
        await until(pilot, lambda: isinstance(app.screen, RestoreChoice))
        await pilot.press("enter")  # code and conversation
        await until(pilot, lambda: app.prompt_input.text == "one")
        assert not (workspace / "a.txt").exists()
        assert prompts(app) == []
        assert app.vm.status.approval_mode == "yolo"


async def test_rewind_puts_back_what_was_typed_not_what_was_sent(tmp_path: Path) -> None:
    pasted = "\n".join(f"trace line {n}" for n in range(15))
    async with app_in(tmp_path) as (app, pilot, workspace):
        (workspace / "notes.md").write_text("the notes\n", encoding="utf-8")
        app.post_message(events.Paste(pasted))
        await until(pilot, lambda: app.prompt_input.text == "[pasted #1: 15 lines]")
        await send(pilot, " see @notes.md")
        await until(pilot, lambda: not app.vm.busy and len(app.vm.blocks) > 2)
        assert "the notes" in app.loop.history()[0].message.text  # the file went with it
        await send(pilot, "/rewind")
        await until(pilot, lambda: isinstance(app.screen, RewindPicker))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RestoreChoice))
        await pilot.press("enter")
        typed = "[pasted #1: 15 lines] see @notes.md"
        await until(pilot, lambda: app.prompt_input.text == typed)
        # The chip still stands for the pasted text: sent again, it is the same prompt.
        assert unfolded(app.prompt_input.draft()) == f"{pasted} see @notes.md"


async def test_rewind_of_a_session_logged_before_drafts_puts_back_the_words(
    tmp_path: Path,
) -> None:
    async with app_in(tmp_path) as (app, pilot, workspace):
        (workspace / "notes.md").write_text("the notes\n", encoding="utf-8")
        await send(pilot, "see @notes.md")
        await until(pilot, lambda: not app.vm.busy and len(app.vm.blocks) > 2)
        session = app.loop.info.session_id
    log = Path(os.environ["TUI_AGENT_HOME"]) / "sessions" / session / "events.jsonl"
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    for record in lines:
        record.pop("draft", None)  # as an older version wrote the log
    log.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    async with app_in(tmp_path, resume=session) as (app, pilot, _workspace):
        await send(pilot, "/rewind")
        await until(pilot, lambda: isinstance(app.screen, RewindPicker))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RestoreChoice))
        await pilot.press("enter")
        await until(pilot, lambda: app.prompt_input.text == "see @notes.md")
