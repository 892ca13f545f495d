"""An MCP server's prompts and resources in the prompt box, through the real loop and real keys
with the in-test server (tests/support/mcp_server.py) configured in `config.toml`: a prompt as
`/mcp__fx__review` with its arguments, a resource as `@fx:fixture://notes`, and an image a
tool returned shown as a chip on its row."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.ui.real_loop import until
from tests.ui.test_flows import app_on, send
from tests.ui.test_prompt_power import markers, type_keys, user_texts
from tui_agent.loop.api import LoopApi
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.view_model import ToolBlock

SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    home = Path(os.environ["TUI_AGENT_HOME"])
    (home / "config.toml").write_text(
        f'[mcp_servers.fx]\ncommand = "{sys.executable}"\nargs = ["{SERVER}", "stdio"]\n'
    )
    return root


@asynccontextmanager
async def app_with_fx(
    steps: list[dict[str, Any]], workspace: Path
) -> AsyncIterator[tuple[TuiAgentApp, Pilot[None], LoopApi]]:
    async with app_on(steps, workspace) as (app, pilot, loop):
        await loop.mcp_started()
        await until(pilot, lambda: bool(app.loop.mcp_offers().prompts()))
        yield app, pilot, loop


async def test_a_servers_prompt_is_a_command_that_takes_its_arguments(workspace: Path) -> None:
    async with app_with_fx([{"text": "Reviewed."}], workspace) as (app, pilot, loop):
        await type_keys(pilot, "/mcp__fx__rev")
        await until(pilot, lambda: app.completion.chosen is not None)
        assert app.completion.chosen is not None
        assert app.completion.chosen.name == "mcp__fx__review"
        assert app.completion.chosen.args == "<path> [focus]"
        await pilot.press("tab")
        await type_keys(pilot, "a.py focus=style")
        await pilot.press("enter")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
        await send(pilot, "/mcp__fx__review")
        await until(pilot, lambda: "missing path" in markers(app))
    assert user_texts(loop) == ["Review a.py, looking for style."]
    assert "/mcp__fx__review: missing path; nothing was sent" in markers(app)


async def test_a_resource_mention_is_completed_and_its_contents_go_with_the_prompt(
    workspace: Path,
) -> None:
    async with app_with_fx([{"text": "Read."}], workspace) as (app, pilot, loop):
        await type_keys(pilot, "summarise @fx:")
        await until(pilot, lambda: bool(app.paths.display))
        assert app.paths.chosen == "fx:fixture://notes"
        await pilot.press("tab")
        await pilot.press("enter")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
    (sent,) = user_texts(loop)
    assert sent.startswith("summarise @fx:fixture://notes")
    assert '<context source="@fx:fixture://notes">\nthe notes say hello' in sent


async def test_an_image_from_a_tool_shows_as_a_chip_on_its_row(workspace: Path) -> None:
    steps = [{"tool_calls": [{"name": "mcp__fx__image", "arguments": {}}]}, {"text": "Seen."}]
    async with app_with_fx(steps, workspace) as (app, pilot, loop):
        await send(pilot, "show me")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
        [block] = [b for b in app.vm.blocks if isinstance(b, ToolBlock)]
        assert block.display == {"images": ["image/png · 70 B"]}  # the fixture's 1×1 PNG
        widget = app.transcript.query_one("ToolCallBlock")
        assert " image/png · 70 B " in str(widget._header_text())  # type: ignore[attr-defined]
