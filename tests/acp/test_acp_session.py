"""What an ACP session offers besides prompts: commands, the model, images, authentication
when no key is set, the list of sessions, a loaded session's plan and usage, and messages a
client must not miss (a failed MCP server; no traceback when it leaves mid-question)."""

from __future__ import annotations

import asyncio
import base64
import io
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp import schema as acp
from PIL import Image

from tests.acp.support import RecordingClient, agent, script
from tests.support.openai_server import ScriptedOpenAIServer, scripted_openai_server

pytestmark = pytest.mark.timeout(90)


@asynccontextmanager
async def openai_agent(
    client: RecordingClient, answers: list[dict[str, Any]]
) -> AsyncIterator[tuple[Any, ScriptedOpenAIServer]]:
    """An agent on a local OpenAI-compatible server, whose requests the test reads."""
    with scripted_openai_server(answers) as server:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
        async with spawn_agent_process(
            client,
            *(sys.executable, "-m", "tui_agent", "acp", "--provider", "openai"),
            *("--base-url", server.base_url, "--model", "m"),
            env=env,
        ) as (conn, _):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            yield conn, server


def said(client: RecordingClient) -> str:
    return client.text()


async def test_the_commands_are_offered_with_the_users_own(tmp_path: Path, workspace: Path) -> None:
    commands = workspace / ".tui-agent" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $ARGUMENTS closely.\n"
    )
    client = RecordingClient()
    async with agent(client, "--provider", "scripted", "--script", script(tmp_path, [])) as (
        conn,
        _,
    ):
        await conn.new_session(cwd=str(workspace), mcp_servers=[])
        update = await client.wait_for(lambda u: u.session_update == "available_commands_update")
    offered = {c.name: c for c in update.available_commands}
    assert {"compact", "model", "approval", "status", "cost", "permissions"} <= set(offered)
    assert offered["review"].description == "Review a file"
    assert offered["review"].input.root.hint == "FILE"


async def test_a_users_command_sent_as_a_prompt_reaches_the_model_expanded(
    workspace: Path,
) -> None:
    commands = workspace / ".tui-agent" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review $ARGUMENTS closely.\n")
    client = RecordingClient()
    async with openai_agent(client, [{"text": "Reviewed."}]) as (conn, server):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("/review a.txt")])
    user = [m for m in server.requests[0]["messages"] if m["role"] == "user"][-1]["content"]
    assert "Review a.txt closely." in str(user)


async def test_a_commands_model_runs_its_turn_and_the_next_prompt_the_sessions(
    workspace: Path,
) -> None:
    commands = workspace / ".tui-agent" / "commands"
    commands.mkdir(parents=True)
    (commands / "quick.md").write_text("---\nmodel: gpt-4.1-mini\n---\nCheck $ARGUMENTS.\n")
    client = RecordingClient()
    async with openai_agent(client, [{"text": "Checked."}, {"text": "Plain."}]) as (conn, server):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("/quick a.txt")])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("plain")])
    assert [request["model"] for request in server.requests] == ["gpt-4.1-mini", "m"]


async def test_a_commands_model_the_session_cannot_reach_is_refused(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # a session on OpenAI; nothing is sent
    commands = workspace / ".tui-agent" / "commands"
    commands.mkdir(parents=True)
    (commands / "quick.md").write_text("---\nmodel: claude-haiku-4-5\n---\nCheck it.\n")
    client = RecordingClient()
    async with agent(client, "--model", "gpt-4.1") as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("/quick")])
    assert done.stop_reason == "end_turn"
    assert "not sent: model claude-haiku-4-5 cannot be used: ANTHROPIC_API_KEY" in said(client)


async def test_a_builtin_command_answers_without_the_model_and_a_wrong_one_is_refused(
    tmp_path: Path, workspace: Path
) -> None:
    client = RecordingClient()
    async with agent(client, "--provider", "scripted", "--script", script(tmp_path, [])) as (
        conn,
        _,
    ):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("/status")])
        assert done.stop_reason == "end_turn"
        await conn.prompt(session_id=session.session_id, prompt=[text_block("/approval yolo")])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("/stauts")])
    assert f"Session: {session.session_id}" in said(client)
    assert [u.current_mode_id for u in client.of("current_mode_update")] == ["yolo"]
    assert "/stauts is not a command (try /status)" in said(client)


async def test_the_model_is_a_config_option_and_a_switch_keeps_the_conversation(
    workspace: Path,
) -> None:
    client = RecordingClient()
    async with openai_agent(client, [{"text": "One."}, {"text": "Two."}]) as (conn, server):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        (option,) = session.config_options
        assert option.id == "model" and option.current_value == "m"
        values = [o.value for o in option.options]
        assert values[0] == "m" and "gpt-4.1" in values
        await conn.prompt(session_id=session.session_id, prompt=[text_block("first")])
        changed = await conn.set_config_option(
            config_id="model", session_id=session.session_id, value="gpt-4.1"
        )
        await conn.prompt(session_id=session.session_id, prompt=[text_block("second")])
    assert changed.config_options[0].current_value == "gpt-4.1"
    assert [r["model"] for r in server.requests] == ["m", "gpt-4.1"]
    assert "first" in str(server.requests[1]["messages"])


async def test_a_model_without_a_key_is_refused_and_the_session_keeps_its_model(
    workspace: Path,
) -> None:
    client = RecordingClient()
    with scripted_openai_server([{"text": "Still here."}]) as server:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url}
        async with spawn_agent_process(
            client, sys.executable, "-m", "tui_agent", "acp", "--model", "m", env=env
        ) as (conn, _):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            command = text_block("/model claude-sonnet-4-5")
            await conn.prompt(session_id=session.session_id, prompt=[command])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("hello")])
    assert "Model unchanged: claude-sonnet-4-5: no key for it" in said(client)
    assert [r["model"] for r in server.requests] == ["m"]


def png(width: int, height: int) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "red").save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


async def test_an_image_in_a_prompt_reaches_the_model_and_a_broken_one_is_refused(
    workspace: Path,
) -> None:
    client = RecordingClient()
    image = acp.ImageContentBlock(type="image", data=png(40, 30), mime_type="image/png")
    broken = acp.ImageContentBlock(type="image", data="bm90IGFuIGltYWdl", mime_type="image/png")
    async with openai_agent(client, [{"text": "A red square."}]) as (conn, server):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        with pytest.raises(RequestError) as refused:
            await conn.prompt(session_id=session.session_id, prompt=[text_block("?"), broken])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("what?"), image])
    assert "image" in str(refused.value.data)
    (request,) = server.requests
    user = [m for m in request["messages"] if m["role"] == "user"][-1]["content"]
    parts = {part["type"]: part for part in user}
    assert parts["image_url"]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "40×30" in parts["text"]["text"]


async def test_without_a_key_the_client_is_asked_to_authenticate_and_may_pick_the_demo(
    workspace: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    client = RecordingClient()
    async with spawn_agent_process(client, sys.executable, "-m", "tui_agent", "acp", env=env) as (
        conn,
        _,
    ):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert [m.id for m in init.auth_methods] == ["api-key", "demo"]
        with pytest.raises(RequestError) as refused:
            await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert refused.value.code == -32000  # auth_required
        with pytest.raises(RequestError) as still:
            await conn.authenticate(method_id="api-key")
        assert "OPENAI_API_KEY" in str(still.value.data)
        await conn.authenticate(method_id="demo")
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert session.session_id


async def test_session_list_names_the_workspaces_sessions_latest_first(
    tmp_path: Path, workspace: Path
) -> None:
    client = RecordingClient()
    steps = [{"text": "one"}, {"text": "two"}]
    async with agent(client, "--provider", "scripted", "--script", script(tmp_path, steps)) as (
        conn,
        _,
    ):
        made = []
        for words in ("first topic", "second topic"):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block(words)])
            made.append(session.session_id)
        listed = await conn.list_sessions(cwd=str(workspace))
    assert {s.session_id: s.title for s in listed.sessions} == {
        made[0]: "first topic",
        made[1]: "second topic",
    }
    assert all(s.cwd == str(workspace) and s.updated_at for s in listed.sessions)


async def test_load_replays_the_plan_and_the_usage_and_a_turn_reports_usage(
    tmp_path: Path, workspace: Path
) -> None:
    todos = [{"content": "look", "status": "completed"}, {"content": "fix", "status": "pending"}]
    usage = {"input_other": 1200, "output": 30}
    steps = [
        {"tool_calls": [{"name": "todo_write", "arguments": {"todos": todos}}], "usage": usage},
        {"text": "Planned.", "usage": usage},
    ]
    first = RecordingClient()
    async with agent(first, "--provider", "scripted", "--script", script(tmp_path, steps)) as (
        conn,
        _,
    ):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("plan")])
    assert first.of("usage_update") and first.of("usage_update")[-1].used > 0

    again = RecordingClient()
    async with agent(again, "--provider", "scripted", "--script", script(tmp_path, [])) as (
        conn,
        _,
    ):
        await conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[])
    (plan,) = again.of("plan")
    assert [(e.content, e.status) for e in plan.entries] == [
        ("look", "completed"),
        ("fix", "pending"),
    ]
    (replayed,) = again.of("usage_update")
    assert replayed.used == first.of("usage_update")[-1].used


async def test_a_client_mcp_server_that_does_not_start_is_said(
    tmp_path: Path, workspace: Path
) -> None:
    client = RecordingClient()
    broken = acp.McpServerStdio(name="broken", command="/nonexistent/server", args=[], env=[])
    async with agent(client, "--provider", "scripted", "--script", script(tmp_path, [])) as (
        conn,
        _,
    ):
        await conn.new_session(cwd=str(workspace), mcp_servers=[broken])
        message = await client.wait_for(lambda u: u.session_update == "agent_message_chunk")
    assert "MCP server broken did not start" in message.content.text


class LeavingClient(RecordingClient):
    """Goes away (closes the agent's stdin) when asked a permission question."""

    process: asyncio.subprocess.Process | None = None

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.close()
        await asyncio.Event().wait()  # never answers


async def test_a_client_that_leaves_during_a_permission_question_leaves_no_traceback(
    tmp_path: Path, workspace: Path
) -> None:
    client = LeavingClient()
    call = {"name": "write_file", "arguments": {"path": "n.txt", "content": "x"}}
    steps = [{"tool_calls": [call]}, {"text": "never"}]
    async with spawn_agent_process(
        client,
        *(sys.executable, "-m", "tui_agent", "acp", "--provider", "scripted"),
        *("--script", script(tmp_path, steps)),
        env=dict(os.environ),  # stderr is a pipe: the test reads it
    ) as (conn, process):
        client.process = process
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        prompt = asyncio.create_task(
            conn.prompt(session_id=session.session_id, prompt=[text_block("write")])
        )
        assert process.stderr is not None
        errors = (await process.stderr.read()).decode()
        assert await process.wait() == 0
        prompt.cancel()
    assert "Traceback" not in errors, errors
    assert "left before answering" in errors
