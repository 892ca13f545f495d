"""The processes the agent starts besides shell commands end with it, even after kill -9: the
Python search worker (grep's fallback, here busy with a pattern that backtracks for ever) and
an MCP stdio server that stays when its input ends, with the child it started.

(Shell commands are tested in test_cli_reliability.py.) Waits are bounded polling on whether a
process is alive, never timing assertions.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.test_cli import _wait_for, wait_until_dead
from tests.e2e.test_cli_reliability import shell_step, start
from tests.support.openai_server import scripted_openai_server

FIXTURE = str(Path(__file__).parents[1] / "support" / "mcp_server.py")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def _child_running(parent: int, command_part: bytes, timeout: float = 60) -> int:
    """The pid of `parent`'s child whose command line holds `command_part`, once it runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name in filter(str.isdigit, os.listdir("/proc")):
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
                command = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if int(stat[stat.rfind(b")") + 2 :].split()[1]) == parent and command_part in command:
                return int(name)
        time.sleep(0.05)
    raise AssertionError(f"no child of {parent} runs {command_part!r}")


def test_kill_9_of_the_agent_ends_its_python_search_worker(workspace: Path) -> None:
    (workspace / "as.txt").write_text("a" * 40 + "b\n")
    # ripgrep cannot parse a look-ahead, so the Python worker searches; this one never ends.
    grep = {"name": "grep", "arguments": {"pattern": "^(?=(a+)+$)", "path": "as.txt"}}
    with scripted_openai_server([{"tool_calls": [grep]}]) as server:
        proc = start(server, workspace, "-p", "search")
        worker = _child_running(proc.pid, b"tui_agent.tools._pygrep")
        proc.kill()
        proc.communicate(timeout=10)
    try:
        wait_until_dead(worker)
    except AssertionError:
        _end(worker)
        raise


def test_kill_9_of_the_agent_ends_an_mcp_server_that_ignores_the_end_of_its_input(
    workspace: Path,
) -> None:
    pids = workspace.parent / "server.pids"
    args = json.dumps([FIXTURE, "stdio-ignoring-eof", str(pids)])
    config = Path(os.environ["TUI_AGENT_HOME"]) / "config.toml"
    config.write_text(f'[mcp_servers.stubborn]\ncommand = "{sys.executable}"\nargs = {args}\n')
    with scripted_openai_server([shell_step("echo up > started; sleep 600")]) as server:
        proc = start(server, workspace, "-p", "go")
        _wait_for(workspace / "started", timeout=60)  # the servers are up before the first step
        server_pid, helper = map(int, _wait_for(pids).split())
        proc.kill()
        proc.communicate(timeout=10)
    try:
        wait_until_dead(server_pid)
        wait_until_dead(helper)
    except AssertionError:
        _end(server_pid, helper)
        raise


def test_an_mcp_server_that_ignores_the_end_of_its_input_ends_when_the_agent_exits(
    workspace: Path,
) -> None:
    """An ordinary exit: the server is told by the end of its input, then SIGTERM after a short
    grace, then SIGKILL; the agent's exit is not held up by it for long."""
    pids = workspace.parent / "server.pids"
    args = json.dumps([FIXTURE, "stdio-ignoring-eof", str(pids)])
    config = Path(os.environ["TUI_AGENT_HOME"]) / "config.toml"
    config.write_text(f'[mcp_servers.stubborn]\ncommand = "{sys.executable}"\nargs = {args}\n')
    with scripted_openai_server([{"text": "ok"}]) as server:
        proc = start(server, workspace, "-p", "hi")
        _, err = proc.communicate(timeout=90)
    assert proc.returncode == 0, err
    server_pid, helper = map(int, pids.read_text().split())
    try:
        wait_until_dead(server_pid, limit_s=2)
        wait_until_dead(helper, limit_s=2)
    except AssertionError:
        _end(server_pid, helper)
        raise


def _end(*pids: int) -> None:
    """A failed test leaves nothing of its own running."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
