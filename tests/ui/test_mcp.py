"""MCP in the app: the trust prompt for a workspace's .mcp.json, the status bar count, /mcp."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.ui.fake_loop import FakeLoop
from tests.ui.real_loop import scripted_loop, until
from tests.ui.test_flows import StepClock, approval_shown, send
from tui_agent.loop.api import LoopInfo
from tui_agent.loop.events import McpServerInfo
from tui_agent.session._mcp import WorkspaceTrust
from tui_agent.tools.mcp import McpServerConfig
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.opening import OpeningLoop
from tui_agent.ui.view_model import MarkerBlock
from tui_agent.ui.widgets.approval_bar import QUIET_S

FIXTURE = str(Path(__file__).parents[1] / "support" / "mcp_server.py")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    servers = {"fx": {"command": sys.executable, "args": [FIXTURE]}}
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return folder


@asynccontextmanager
async def app_opening(workspace: Path) -> AsyncIterator[tuple[TuiAgentApp, Pilot[None]]]:
    """As the command line starts it: first frame first, the loop attached once it is open."""
    info = LoopInfo("scripted", "starting", 0, "ask", "", str(workspace), False)
    opening = OpeningLoop(info, lambda: scripted_loop([{"text": "ok"}], workspace=workspace))
    app = TuiAgentApp(opening, clock=StepClock())
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            yield app, pilot
    finally:
        await app.loop.close()


async def answer(
    app: TuiAgentApp, pilot: Pilot[None], key: str, answered: Callable[[], bool]
) -> None:
    """Press `key` on the approval box; on a loaded machine the box may still be guarding
    (a key too soon after it appeared is held back), so move the test clock on and retry."""
    assert isinstance(app.clock, StepClock)
    for _ in range(5):
        await pilot.press(key)
        await pilot.pause()
        if answered():
            return
        app.clock.added += QUIET_S
    raise AssertionError(f"the approval box never took {key!r}")


def status_text(app: TuiAgentApp) -> str:
    return str(app.status_bar.render())


def fx_state(app: TuiAgentApp) -> str | None:
    return next((server.state for server in app.vm.mcp if server.name == "fx"), None)


async def test_always_starts_the_workspace_servers_and_remembers_the_answer(
    workspace: Path,
) -> None:
    async with app_opening(workspace) as (app, pilot):
        await approval_shown(pilot)
        request = app.vm.approvals[0]
        assert request.name == "MCP servers from .mcp.json"
        assert f"fx: {sys.executable} {FIXTURE}" in request.preview
        await answer(app, pilot, "a", lambda: not app.vm.approvals)
        await until(pilot, lambda: fx_state(app) == "ready")
        await until(pilot, lambda: "mcp 1/1" in status_text(app))

    server = McpServerConfig(name="fx", command=sys.executable, args=(FIXTURE,))
    assert WorkspaceTrust(workspace).approved([server])


async def test_deny_leaves_the_workspace_servers_stopped(workspace: Path) -> None:
    async with app_opening(workspace) as (app, pilot):
        await approval_shown(pilot)
        await answer(app, pilot, "n", lambda: not app.approval_bar.display)  # no reason asked
        await until(pilot, lambda: fx_state(app) == "skipped")
        await until(pilot, lambda: "mcp 0/1" in status_text(app))


async def test_the_trust_prompt_shows_env_and_header_names_and_never_an_expanded_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEPLOY_PASSWORD", "hunter2-secret")
    folder = tmp_path / "ws"
    folder.mkdir()
    server = {
        "command": sys.executable,
        "args": [FIXTURE, "${DEPLOY_PASSWORD}"],
        "env": {"PYTHONPATH": "${DEPLOY_PASSWORD}"},
    }
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {"fx": server}}))
    async with app_opening(folder) as (app, pilot):
        await approval_shown(pilot)
        preview = app.vm.approvals[0].preview
        await answer(app, pilot, "n", lambda: not app.approval_bar.display)
    assert f"fx: {sys.executable} {FIXTURE} '${{DEPLOY_PASSWORD}}'\n  env: PYTHONPATH" in preview
    assert "hunter2" not in preview


SERVERS = (
    McpServerInfo(
        name="git",
        source="config",
        state="ready",
        command="uvx mcp-server-git",
        tools=("mcp__git__git_status", "mcp__git__git_log"),
    ),
    McpServerInfo(
        name="docs",
        source="workspace",
        state="failed",
        command="https://example.com/mcp",
        error="did not start within 30 s",
    ),
)


def markers(app: TuiAgentApp) -> list[str]:
    return [block.text for block in app.vm.blocks if isinstance(block, MarkerBlock)]


async def test_slash_mcp_lists_servers_states_tools_and_errors() -> None:
    loop = FakeLoop(mcp=SERVERS)
    app = TuiAgentApp(loop)
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "/mcp")
        await until(pilot, lambda: "MCP servers" in markers(app)[-1])
        text = markers(app)[-1]

    assert text.splitlines()[:4] == [
        "MCP servers: 1 of 2 up",
        "● git  up  (config.toml: uvx mcp-server-git)",
        "    tools: git_status, git_log",
        "● docs  failed  (.mcp.json: https://example.com/mcp)",
    ]
    assert "did not start within 30 s" in text


async def test_slash_mcp_reconnect_asks_the_loop() -> None:
    loop = FakeLoop(mcp=SERVERS)
    app = TuiAgentApp(loop)
    async with app.run_test(size=(120, 36)) as pilot:
        app.run_slash("mcp", "reconnect docs")
        await until(pilot, lambda: ("reconnect_mcp", "docs") in loop.calls)
        app.run_slash("mcp", "reconnect nope")
        await until(pilot, lambda: "no MCP server named 'nope'" in markers(app)[-1])
