"""`tui-agent acp` as a separate process, driven by the ACP package's own client connection.

The agent runs on the scripted provider (or a local OpenAI-compatible server); every wait is
on something the client saw (an update, a permission request), never on the clock.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp import schema as acp

from tests.acp.support import RecordingClient, agent, script
from tests.e2e.test_cli import session_logs
from tests.support.openai_server import scripted_openai_server
from tests.support.processes import gone, kill_all_with
from tui_agent.context import read_log

pytestmark = pytest.mark.timeout(90)


async def test_initialize_says_protocol_1_load_session_and_embedded_context(
    tmp_path: Path,
) -> None:
    async with spawn_agent_process(
        RecordingClient(), sys.executable, "-m", "tui_agent", "acp", env=dict(os.environ)
    ) as (conn, _):
        answer = await conn.initialize(protocol_version=PROTOCOL_VERSION)
    assert answer.protocol_version == 1
    caps = answer.agent_capabilities
    assert caps is not None and caps.load_session
    assert caps.prompt_capabilities is not None and caps.prompt_capabilities.embedded_context
    assert caps.mcp_capabilities is not None and caps.mcp_capabilities.http
    assert answer.agent_info is not None and answer.agent_info.name == "tui-agent"


async def test_a_prompt_streams_the_answer_and_ends_the_turn(
    tmp_path: Path, workspace: Path
) -> None:
    client = RecordingClient()
    steps = [{"thinking": "Let me answer.", "text": "Hello from tui-agent."}]
    async with agent(client, "--provider", "scripted", "--script", script(tmp_path, steps)) as (
        conn,
        _,
    ):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert session.modes is not None
        modes = [m.id for m in session.modes.available_modes]
        assert modes == ["plan", "ask", "auto-edit", "yolo"]
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("say hi")])
    assert done.stop_reason == "end_turn"
    assert client.text() == "Hello from tui-agent."
    assert client.text("agent_thought_chunk") == "Let me answer."


async def prompt_a_write(
    tmp_path: Path, workspace: Path, answer: str, path: str, content: str
) -> tuple[RecordingClient, Any]:
    """One turn that writes `path` in ask mode, the client answering `answer`."""
    client = RecordingClient(answer=answer)
    call = {"name": "write_file", "arguments": {"path": path, "content": content}}
    steps = [{"tool_calls": [call]}, {"text": "Done."}]
    async with agent(client, "--provider", "scripted", "--script", script(tmp_path, steps)) as (
        conn,
        _,
    ):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("write")])
    return client, done


async def test_a_write_asks_permission_and_lands_with_a_diff_when_allowed(
    tmp_path: Path, workspace: Path
) -> None:
    client, done = await prompt_a_write(tmp_path, workspace, "allow_once", "new.txt", "hi")
    assert done.stop_reason == "end_turn"
    assert (workspace / "new.txt").read_text() == "hi"
    (asked,) = client.permissions
    assert {o.kind for o in asked.options} == {
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    }
    (start,) = client.of("tool_call")
    assert start.kind == "edit" and start.title == "Write new.txt"
    assert start.locations[0].path == str(workspace / "new.txt")
    assert start.raw_input == {"path": "new.txt", "content": "hi"}
    final = client.of("tool_call_update")[-1]
    assert final.status == "completed"
    (diff,) = final.content
    assert diff.type == "diff" and diff.new_text == "hi" and diff.path.endswith("new.txt")


async def test_a_rejected_write_fails_the_call_and_writes_nothing(
    tmp_path: Path, workspace: Path
) -> None:
    client, done = await prompt_a_write(tmp_path, workspace, "reject_once", "no.txt", "x")
    assert done.stop_reason == "end_turn"
    assert len(client.permissions) == 1
    assert not (workspace / "no.txt").exists()
    final = client.of("tool_call_update")[-1]
    assert final.status == "failed" and "denied" in final.content[0].content.text


async def test_yolo_mode_set_by_the_client_runs_without_asking(
    tmp_path: Path, workspace: Path
) -> None:
    client = RecordingClient()
    steps = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "y.txt", "content": "y"}}]},
        {"text": "ok"},
    ]
    async with agent(client, "--provider", "scripted", "--script", script(tmp_path, steps)) as (
        conn,
        _,
    ):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        await conn.prompt(session_id=session.session_id, prompt=[text_block("write")])
    assert client.permissions == [] and (workspace / "y.txt").read_text() == "y"


async def test_cancel_mid_stream_answers_cancelled(tmp_path: Path, workspace: Path) -> None:
    client = RecordingClient()
    steps = [{"text": "word " * 2000, "chunk_delay_s": 0.02, "chunk_chars": 5}]
    async with agent(client, "--provider", "scripted", "--script", script(tmp_path, steps)) as (
        conn,
        _,
    ):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        prompt = asyncio.create_task(
            conn.prompt(session_id=session.session_id, prompt=[text_block("talk")])
        )
        await client.wait_for(lambda u: u.session_update == "agent_message_chunk")
        await conn.cancel(session_id=session.session_id)
        done = await prompt
    assert done.stop_reason == "cancelled"
    assert len(client.text()) < len("word " * 2000)


@asynccontextmanager
async def endless_tool(
    client: RecordingClient, tmp_path: Path, workspace: Path
) -> AsyncIterator[tuple[Any, asyncio.subprocess.Process, str, asyncio.Task[Any]]]:
    """An agent whose turn runs a shell call that never ends, once the client saw it run. Every
    process of the command (bubblewrap's and the shell's) names the workspace in its command
    line: `gone(str(workspace))` says whether they all ended."""
    never = f"while [ ! -e {workspace / 'never'} ]; do sleep 0.05; done"
    steps = [{"tool_calls": [{"name": "shell", "arguments": {"command": never}}]}]
    try:
        async with agent(client, "--provider", "scripted", "--script", script(tmp_path, steps)) as (
            conn,
            process,
        ):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
            prompt = asyncio.create_task(
                conn.prompt(session_id=session.session_id, prompt=[text_block("run")])
            )
            await client.wait_for(
                lambda u: u.session_update == "tool_call_update" and u.status == "in_progress"
            )
            yield conn, process, session.session_id, prompt
    finally:
        kill_all_with(str(workspace))  # what a failing test left: never the next test's


async def test_cancel_mid_tool_answers_cancelled_with_the_call_failed(
    tmp_path: Path, workspace: Path
) -> None:
    client = RecordingClient()
    async with endless_tool(client, tmp_path, workspace) as (conn, _, session_id, prompt):
        await conn.cancel(session_id=session_id)
        done = await prompt
        assert gone(str(workspace))  # the cancel ended them, not the agent's exit
    assert done.stop_reason == "cancelled"
    assert client.of("tool_call_update")[-1].status == "failed"


async def test_max_steps_answers_max_turn_requests(tmp_path: Path, workspace: Path) -> None:
    client = RecordingClient()
    read = {"name": "read_file", "arguments": {"path": "a.txt"}}
    steps = [{"tool_calls": [read]}, {"tool_calls": [read]}, {"text": "never"}]
    args = ("--provider", "scripted", "--script", script(tmp_path, steps), "--max-steps", "1")
    async with agent(client, *args) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("loop")])
    assert done.stop_reason == "max_turn_requests"


async def test_the_plan_is_sent_as_plan_updates(tmp_path: Path, workspace: Path) -> None:
    client = RecordingClient()
    todos = [{"content": "look", "status": "in_progress"}, {"content": "fix", "status": "pending"}]
    steps = [{"tool_calls": [{"name": "todo_write", "arguments": {"todos": todos}}]}, {"text": "."}]
    async with agent(client, "--provider", "scripted", "--script", script(tmp_path, steps)) as (
        conn,
        _,
    ):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("plan")])
    (plan,) = client.of("plan")
    assert [(e.content, e.status) for e in plan.entries] == [
        ("look", "in_progress"),
        ("fix", "pending"),
    ]


async def test_embedded_resources_reach_the_model_as_context(
    tmp_path: Path, workspace: Path
) -> None:
    client = RecordingClient()
    buffer = acp.EmbeddedResourceContentBlock(
        type="resource",
        resource=acp.TextResourceContents(uri="file:///ws/unsaved.py", text="print('draft')"),
    )
    with scripted_openai_server([{"text": "Seen."}]) as server:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
        async with spawn_agent_process(
            client,
            sys.executable,
            "-m",
            "tui_agent",
            "acp",
            "--provider",
            "openai",
            "--base-url",
            server.base_url,
            "--model",
            "m",
            env=env,
        ) as (conn, _):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            link = acp.ResourceContentBlock(type="resource_link", name="a.txt", uri="file:///a.txt")
            await conn.prompt(
                session_id=session.session_id, prompt=[text_block("explain"), link, buffer]
            )
    user = [m for m in server.requests[0]["messages"] if m["role"] == "user"][-1]["content"]
    assert "explain" in user and "@/a.txt" in user and "print('draft')" in user


async def test_session_load_replays_a_session_made_headless(
    tmp_path: Path, workspace: Path
) -> None:
    steps = [{"text": "First answer."}]
    made = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tui_agent",
        "-p",
        "first question",
        "--provider",
        "scripted",
        "--script",
        script(tmp_path, steps),
        "--workspace",
        str(workspace),
        stdout=asyncio.subprocess.PIPE,
    )
    assert (await made.communicate())[0].decode().strip() == "First answer."
    (log,) = session_logs()
    session_id = log.parent.name

    client = RecordingClient()
    async with agent(client, "--provider", "scripted", "--script", script(tmp_path, [])) as (
        conn,
        _,
    ):
        await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
    assert client.text("user_message_chunk") == "first question"
    assert client.text() == "First answer."


async def test_an_unknown_session_is_a_clear_error(tmp_path: Path, workspace: Path) -> None:
    async with agent(RecordingClient(), "--provider", "scripted") as (conn, _):
        with pytest.raises(RequestError) as raised:
            await conn.prompt(session_id="nope", prompt=[text_block("hi")])
    assert "unknown session" in str(raised.value.data)


async def test_a_malformed_message_gets_an_error_and_the_agent_keeps_serving(
    tmp_path: Path,
) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tui_agent",
        "acp",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b"this is not json\n")
    process.stdin.write(
        json.dumps(
            {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": 1}}
        ).encode()
        + b"\n"
    )
    await process.stdin.drain()
    replies = [json.loads(await process.stdout.readline()) for _ in range(2)]
    process.stdin.close()
    assert await process.wait() == 0
    error = next(r for r in replies if "error" in r)
    assert error["error"]["code"] == -32700  # parse error
    ok = next(r for r in replies if r.get("id") == 7)
    assert ok["result"]["protocolVersion"] == 1


async def test_a_client_that_disappears_ends_the_turn_and_seals_the_log(
    tmp_path: Path, workspace: Path
) -> None:
    client = RecordingClient()
    async with endless_tool(client, tmp_path, workspace) as (_, process, _, prompt):
        assert process.stdin is not None
        process.stdin.close()  # the editor went away
        assert await process.wait() == 0
        prompt.cancel()  # its answer can never come: the connection is gone
        assert gone(str(workspace))
    (log,) = session_logs()
    types = [record.type for record in read_log(log)]
    assert types[-1] == "turn.end"
    assert "tool.result" in types  # the running call was answered before the log was sealed


async def test_mcp_servers_the_client_gives_are_used_and_the_workspace_file_is_not(
    tmp_path: Path, workspace: Path
) -> None:
    bin_dir = Path(sys.executable).parent
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"other": {"command": "/nonexistent/server"}}})
    )
    client = RecordingClient()
    call = {"name": "mcp__time__get_current_time", "arguments": {"timezone": "UTC"}}
    steps = [{"tool_calls": [call]}, {"text": "done"}]
    time_server = acp.McpServerStdio(
        name="time", command=str(bin_dir / "mcp-server-time"), args=[], env=[]
    )
    async with agent(client, "--provider", "scripted", "--script", script(tmp_path, steps)) as (
        conn,
        _,
    ):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[time_server])
        await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        await conn.prompt(session_id=session.session_id, prompt=[text_block("time?")])
    final = client.of("tool_call_update")[-1]
    assert final.status == "completed"
    assert '"timezone": "UTC"' in final.content[0].content.text
    assert client.permissions == []  # the workspace's server was never offered for approval


class EditorClient(RecordingClient):
    """A client that offers its buffers: reads and writes go to `buffers`, not the disk."""

    def __init__(self, buffers: dict[str, str]) -> None:
        super().__init__()
        self.buffers = buffers
        self.writes: list[str] = []

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> Any:
        if path not in self.buffers:
            raise RequestError.resource_not_found(path)
        return acp.ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> None:
        self.writes.append(path)
        self.buffers[path] = content


async def test_with_client_files_the_tools_read_and_write_the_editors_buffers(
    tmp_path: Path, workspace: Path
) -> None:
    unsaved = str(workspace / "a.txt")
    client = EditorClient({unsaved: "alpha (unsaved edit in the editor)\n"})
    steps = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {"path": "a.txt", "old_string": "alpha", "new_string": "omega"},
                },
                {"name": "write_file", "arguments": {"path": "new.txt", "content": "fresh\n"}},
            ]
        },
        {"text": "done"},
    ]
    capabilities = acp.ClientCapabilities(
        fs=acp.FileSystemCapabilities(read_text_file=True, write_text_file=True)
    )
    async with spawn_agent_process(
        client,
        sys.executable,
        "-m",
        "tui_agent",
        "acp",
        "--provider",
        "scripted",
        "--script",
        script(tmp_path, steps),
        env=dict(os.environ),
    ) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
    read = next(u for u in client.of("tool_call_update") if u.status == "completed")
    assert "unsaved edit in the editor" in read.content[0].content.text
    assert client.buffers[unsaved] == "omega (unsaved edit in the editor)\n"
    assert client.buffers[str(workspace / "new.txt")] == "fresh\n"
    assert (workspace / "a.txt").read_text() == "alpha\n"  # the disk is the editor's to save
    assert not (workspace / "new.txt").exists()


async def test_plan_mode_is_a_session_mode_and_the_plan_a_permission_request(
    tmp_path: Path, workspace: Path
) -> None:
    client = RecordingClient(answer="auto-edit")
    edit = {
        "name": "edit_file",
        "arguments": {"path": "a.txt", "old_string": "alpha", "new_string": "beta"},
    }
    plan = {"name": "exit_plan_mode", "arguments": {"plan": "# Plan\n1. alpha becomes beta"}}
    steps = [
        {"tool_calls": [edit]},
        {"tool_calls": [plan]},
        {"tool_calls": [edit]},
        {"text": "Done."},
    ]
    async with agent(client, "--provider", "scripted", "--script", script(tmp_path, steps)) as (
        conn,
        _,
    ):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="plan")
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("plan it")])
    assert done.stop_reason == "end_turn"
    [asked] = client.permissions  # the plan; the edit after it ran in auto-edit, unasked
    assert [o.option_id for o in asked.options] == ["auto-edit", "ask", "keep_planning"]
    assert "alpha becomes beta" in asked.tool_call.content[0].content.text
    modes = [u.current_mode_id for u in client.of("current_mode_update")]
    assert modes == ["plan", "auto-edit"]
    assert (workspace / "a.txt").read_text() == "beta\n"
