"""What an editor shows of our tool calls over ACP: the diff of an edit before it is approved,
a command's live output (in the editor's own terminal when it offers one), and the slash
commands it can offer."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

from acp import schema as acp
from acp import text_block

from tests.acp.support import RecordingClient, agent, script


class DiskWatchingClient(RecordingClient):
    """Records what a file held on disk at the moment each permission question came."""

    def __init__(self, watched: Path) -> None:
        super().__init__()
        self.watched = watched
        self.on_disk: list[str] = []

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> acp.RequestPermissionResponse:
        self.on_disk.append(self.watched.read_text())
        return await super().request_permission(session_id, tool_call, options, **kwargs)


async def test_an_edit_is_asked_about_with_its_diff_before_the_file_changes(
    tmp_path: Path, workspace: Path
) -> None:
    client = DiskWatchingClient(workspace / "a.txt")
    edit = {"path": "a.txt", "old_string": "alpha", "new_string": "beta"}
    steps = [{"tool_calls": [{"name": "edit_file", "arguments": edit}]}, {"text": "Done."}]
    async with agent(client, "--provider", "scripted", "--script", script(tmp_path, steps)) as (
        conn,
        _,
    ):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("edit")])
    assert client.on_disk == ["alpha\n"]
    (asked,) = client.permissions
    (card,) = client.of("tool_call")
    call = asked.tool_call
    assert (call.title, call.kind, call.raw_input) == (card.title, card.kind, card.raw_input)
    (diff,) = call.content
    assert diff.type == "diff" and diff.path == str(workspace / "a.txt")
    assert (diff.old_text, diff.new_text) == ("alpha\n", "beta\n")
    assert (workspace / "a.txt").read_text() == "beta\n"


class TerminalClient(RecordingClient):
    """A client that offers terminals: it runs each command itself and records the calls."""

    def __init__(self) -> None:
        super().__init__()
        self.created: list[list[str]] = []
        self.killed: list[str] = []
        self.released: list[str] = []
        self._processes: dict[str, asyncio.subprocess.Process] = {}
        self._output: dict[str, bytes] = {}

    async def create_terminal(
        self, session_id: str, command: str, args: list[str] | None = None, **kwargs: Any
    ) -> acp.CreateTerminalResponse:
        argv = [command, *(args or [])]
        self.created.append(argv)
        env = {**os.environ, **{v.name: v.value for v in kwargs.get("env") or []}}
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=kwargs.get("cwd"),
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal_id = f"term-{len(self.created)}"
        self._processes[terminal_id] = process
        return acp.CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> acp.WaitForTerminalExitResponse:
        process = self._processes[terminal_id]
        assert process.stdout is not None
        self._output[terminal_id] = await process.stdout.read()
        return acp.WaitForTerminalExitResponse(exit_code=await process.wait())

    async def terminal_output(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> acp.TerminalOutputResponse:
        process = self._processes[terminal_id]
        code = process.returncode
        status = None
        if code is not None:
            status = acp.TerminalExitStatus(
                exit_code=code if code >= 0 else None,
                signal=signal.Signals(-code).name if code < 0 else None,
            )
        output = self._output.get(terminal_id, b"").decode()
        return acp.TerminalOutputResponse(output=output, truncated=False, exit_status=status)

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> None:
        self.killed.append(terminal_id)
        os.killpg(self._processes[terminal_id].pid, signal.SIGKILL)
        await self._processes[terminal_id].wait()

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> None:
        self.released.append(terminal_id)


TERMINALS = acp.ClientCapabilities(terminal=True)


async def test_a_command_runs_in_the_clients_terminal_which_the_call_shows(
    tmp_path: Path, workspace: Path
) -> None:
    client = TerminalClient()
    steps = [
        {"tool_calls": [{"name": "shell", "arguments": {"command": "echo from-the-editor"}}]},
        {"text": "Done."},
    ]
    args = ("--provider", "scripted", "--script", script(tmp_path, steps))
    async with agent(client, *args, capabilities=TERMINALS) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        await conn.prompt(session_id=session.session_id, prompt=[text_block("run")])
    (argv,) = client.created
    assert argv[0] == "env" and "-u" in argv and "OPENAI_API_KEY" in argv
    assert argv[-4:] == ["bash", "--norc", "-c", "echo from-the-editor"]
    assert client.released == ["term-1"]
    shown = [
        u for u in client.of("tool_call_update") if u.content and u.content[0].type == "terminal"
    ]
    assert shown and shown[0].content[0].terminal_id == "term-1"
    final = client.of("tool_call_update")[-1]
    assert final.status == "completed" and final.content[0].type == "terminal"
    assert "from-the-editor" in final.raw_output


async def test_cancel_kills_the_command_in_the_clients_terminal(
    tmp_path: Path, workspace: Path
) -> None:
    client = TerminalClient()
    never = f"while [ ! -e {workspace / 'never'} ]; do sleep 0.05; done"
    steps = [{"tool_calls": [{"name": "shell", "arguments": {"command": never}}]}]
    args = ("--provider", "scripted", "--script", script(tmp_path, steps))
    async with agent(client, *args, capabilities=TERMINALS) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        prompt = asyncio.create_task(
            conn.prompt(session_id=session.session_id, prompt=[text_block("run")])
        )
        await client.wait_for(
            lambda u: (
                u.session_update == "tool_call_update"
                and bool(u.content)
                and u.content[0].type == "terminal"
            )
        )
        await conn.cancel(session_id=session.session_id)
        done = await prompt
    assert done.stop_reason == "cancelled"
    assert client.killed == ["term-1"] and client.released == ["term-1"]


async def test_without_a_terminal_a_commands_output_streams_while_it_runs(
    tmp_path: Path, workspace: Path
) -> None:
    client = RecordingClient()
    gate = workspace / "go-on"
    command = f"echo first-line; while [ ! -e {gate} ]; do sleep 0.05; done; echo last-line"
    steps = [{"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}, {"text": "."}]
    args = ("--provider", "scripted", "--script", script(tmp_path, steps))
    async with agent(client, *args) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        prompt = asyncio.create_task(
            conn.prompt(session_id=session.session_id, prompt=[text_block("run")])
        )
        live = await client.wait_for(
            lambda u: (
                u.session_update == "tool_call_update"
                and bool(u.content)
                and "first-line" in u.content[0].content.text
            )
        )
        assert live.status is None  # still running: no final status yet
        gate.touch()
        await prompt
    final = client.of("tool_call_update")[-1]
    assert final.status == "completed" and "last-line" in final.content[0].content.text
