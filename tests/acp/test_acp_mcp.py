"""MCP servers an ACP client hands over in `session/new`: over the transports its schema names,
and an HTTP one that needs an OAuth login.

`tui-agent acp` runs as a separate process on the scripted provider; the servers are the
in-test fixture server (tests/support/mcp_server.py) and the OAuth-protected one
(tests/support/oauth_server.py) on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import schema as acp
from acp import text_block

from tests.acp.support import RecordingClient, agent, script
from tests.support.browser import approve_in_browser
from tests.support.oauth_server import OAuthServer, serve
from tests.tools.mcp.conftest import served
from tui_agent.cli import main
from tui_agent.session import client_server
from tui_agent.tools.mcp import McpServers

pytestmark = pytest.mark.timeout(90)


async def test_a_client_given_sse_server_is_connected_over_legacy_sse(
    tmp_path: Path, workspace: Path
) -> None:
    client = RecordingClient()
    call = {"name": "mcp__fx__echo", "arguments": {"text": "over sse"}}
    steps = [{"tool_calls": [call]}, {"text": "done"}]
    with served("sse") as url:
        server = acp.SseMcpServer(type="sse", name="fx", url=url, headers=[])
        async with agent(client, "--provider", "scripted", "--script", script(tmp_path, steps)) as (
            conn,
            _,
        ):
            answer = await conn.initialize(protocol_version=1)
            caps = answer.agent_capabilities
            assert caps is not None and caps.mcp_capabilities is not None
            assert caps.mcp_capabilities.sse  # the client may offer one
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[server])
            await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
            await conn.prompt(session_id=session.session_id, prompt=[text_block("echo")])
    final = client.of("tool_call_update")[-1]
    assert final.status == "completed"
    assert final.content[0].content.text == "echo: over sse"


async def test_a_client_given_server_that_needs_a_login_names_the_command_that_does_it(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    oauth = OAuthServer()
    http, serving = await serve(oauth)
    server = acp.HttpMcpServer(type="http", name="fx", url=oauth.mcp_url, headers=[])
    client = RecordingClient()
    steps = [{"tool_calls": [{"name": "mcp__fx__whoami", "arguments": {}}]}, {"text": "done"}]
    try:
        async with agent(client, "--provider", "scripted", "--script", script(tmp_path, steps)) as (
            conn,
            _,
        ):
            await conn.new_session(cwd=str(workspace), mcp_servers=[server])
            said = await client.wait_for(
                lambda u: (
                    u.session_update == "agent_message_chunk"
                    and u.content.text.startswith("MCP server fx")
                )
            )
            assert f"needs a login: run tui-agent mcp login fx --url {oauth.mcp_url}" in (
                said.content.text
            )
            # What the command does, with the test's browser: the tokens are kept by URL ...
            given = client_server("fx", workspace, url=oauth.mcp_url)
            login = McpServers([given], browser=approve_in_browser)
            assert await login.login("fx") is None
            await login.aclose()
            # ... so the editor's next session connects without asking.
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[server])
            await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
            await conn.prompt(session_id=session.session_id, prompt=[text_block("who?")])
        final = client.of("tool_call_update")[-1]
        assert (final.status, final.content[0].content.text) == ("completed", "ran whoami")
        logout = ["mcp", "logout", "fx", "--url", oauth.mcp_url]
        assert await asyncio.to_thread(main, logout) == 0  # the command runs its own loop
        assert capsys.readouterr().out.strip() == "Logged out of fx."
    finally:
        http.should_exit = True
        await serving
