"""MCP servers an ACP client hands over in `session/new`, over the transports its schema names.

`tui-agent acp` runs as a separate process on the scripted provider; the servers are the
in-test fixture server (tests/support/mcp_server.py) on 127.0.0.1.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import schema as acp
from acp import text_block

from tests.acp.support import RecordingClient, agent, script
from tests.tools.mcp.conftest import served

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
