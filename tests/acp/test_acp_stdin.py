"""Hostile input on `tui-agent acp`'s stdin: every bad line is answered, the next is served, and
the agent ends when its input does, quietly even while it waits for an answer. The agent runs as
a subprocess fed raw bytes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_cli import wait_until_dead
from tui_agent.acp._stdin import MAX_DEPTH, MAX_LINE_BYTES

pytestmark = pytest.mark.timeout(120)
DEADLINE_S = 60.0
MCP_FIXTURE = str(Path(__file__).parents[1] / "support" / "mcp_server.py")


def initialize(request_id: int, **meta: Any) -> bytes:
    params: dict[str, Any] = {"protocolVersion": 1}
    if meta:
        params["_meta"] = meta
    message = {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}
    return json.dumps(message).encode() + b"\n"


@asynccontextmanager
async def raw_agent(tmp_path: Path, *args: str) -> AsyncIterator[asyncio.subprocess.Process]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tui_agent",
        "acp",
        "--provider",
        "scripted",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "TUI_AGENT_HOME": str(tmp_path / "home")},
        limit=MAX_LINE_BYTES,
    )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def replies(process: asyncio.subprocess.Process, count: int) -> list[dict[str, Any]]:
    assert process.stdout is not None
    async with asyncio.timeout(DEADLINE_S):
        return [json.loads(await process.stdout.readline()) for _ in range(count)]


async def test_hostile_lines_get_errors_the_next_is_served_and_eof_ends_the_agent(
    tmp_path: Path,
) -> None:
    deep = b"[" * 1_100 + b"]" * 1_100 + b"\n"  # 2 kB that would blow the parser's stack
    huge = b'"' + b"a" * (60 * 1024 * 1024) + b'"\n'  # one 60 MB line
    hostile = [deep, huge, b"[1, 2]\n", b'{"jsonrpc": "2.0", "id": \n']
    async with raw_agent(tmp_path) as process:
        assert process.stdin is not None
        for line in hostile:
            process.stdin.write(line)
        # Brackets inside strings are not nesting: this one is answered as usual.
        process.stdin.write(initialize(7, note="[{" * 1_000))
        writing = asyncio.ensure_future(process.stdin.drain())
        answers = await replies(process, len(hostile) + 1)
        await writing
        process.stdin.close()
        async with asyncio.timeout(DEADLINE_S):
            assert await process.wait() == 0
        assert process.stderr is not None
        stderr = (await process.stderr.read()).decode()
    errors, (ok,) = answers[:-1], answers[-1:]
    assert [(e["id"], e["error"]["code"]) for e in errors] == [
        (None, -32700),
        (None, -32700),
        (None, -32600),
        (None, -32700),
    ]
    assert f"deeper than {MAX_DEPTH}" in errors[0]["error"]["message"]
    assert "MiB, dropped" in errors[1]["error"]["message"]
    assert ok["id"] == 7 and ok["result"]["protocolVersion"] == 1
    assert "Traceback" not in stderr


async def test_a_client_that_ends_mid_line_still_ends_the_agent(tmp_path: Path) -> None:
    async with raw_agent(tmp_path) as process:
        assert process.stdin is not None
        process.stdin.write(initialize(1))
        process.stdin.write(b"a" * (MAX_LINE_BYTES + 10))  # a long line that never ends
        writing = asyncio.ensure_future(process.stdin.drain())
        (ok,) = await replies(process, 1)
        await writing
        process.stdin.close()
        (dropped,) = await replies(process, 1)
        async with asyncio.timeout(DEADLINE_S):
            assert await process.wait() == 0
    assert ok["id"] == 1
    assert dropped["error"]["code"] == -32700


def request(request_id: int, method: str, **params: Any) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message).encode() + b"\n"


async def until_asked(process: asyncio.subprocess.Process) -> dict[str, Any]:
    """Read the agent's messages until it asks the client's permission; that request."""
    assert process.stdout is not None
    async with asyncio.timeout(DEADLINE_S):
        while line := await process.stdout.readline():
            message = json.loads(line)
            if message.get("method") == "session/request_permission":
                return message
    raise AssertionError("the agent ended without asking")


async def test_a_client_that_leaves_during_a_permission_question_ends_the_agent_quietly(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    call = {"name": "write_file", "arguments": {"path": "new.txt", "content": "hi"}}
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"tool_calls": [call]}, {"text": "Done."}]}))
    async with raw_agent(tmp_path, "--script", str(script)) as process:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(initialize(1))
        process.stdin.write(request(2, "session/new", cwd=str(workspace), mcpServers=[]))
        (_, opened) = await replies(process, 2)
        session = opened["result"]["sessionId"]
        prompt = [{"type": "text", "text": "write it"}]
        process.stdin.write(request(3, "session/prompt", sessionId=session, prompt=prompt))
        await until_asked(process)
        process.stdin.close()  # the editor went away mid-question
        async with asyncio.timeout(DEADLINE_S):
            assert await process.wait() == 0
        assert process.stderr is not None
        stderr = (await process.stderr.read()).decode()
    assert "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) <= 1, stderr
    assert not (workspace / "new.txt").exists()


async def test_an_mcp_server_that_ignores_the_end_of_its_input_ends_with_the_agent(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    pids = tmp_path / "server.pids"
    args = json.dumps([MCP_FIXTURE, "stdio-ignoring-eof", str(pids)])
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text(
        f'[mcp_servers.stubborn]\ncommand = "{sys.executable}"\nargs = {args}\n'
    )
    async with raw_agent(tmp_path) as process:
        assert process.stdin is not None
        process.stdin.write(initialize(1))
        process.stdin.write(request(2, "session/new", cwd=str(workspace), mcpServers=[]))
        (_, opened) = await replies(process, 2)  # answered once the servers are up
        assert "sessionId" in opened["result"]
        server_pid, helper = map(int, pids.read_text().split())
        process.stdin.close()
        async with asyncio.timeout(DEADLINE_S):
            assert await process.wait() == 0
    try:  # killed by the time the agent has exited; the poll only covers the kernel's lag
        wait_until_dead(server_pid, limit_s=5)
        wait_until_dead(helper, limit_s=5)
    except AssertionError:
        for pid in (server_pid, helper):  # a failed test leaves nothing of its own running
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        raise
