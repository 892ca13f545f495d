"""Closing the terminal ends the full-screen app: the app runs in tmux (a server of its own, on
its own socket), a turn is running a tool, and `tmux kill-session` hangs the terminal up.

Two ways the app learns it: SIGHUP (it leads the terminal's session, as under a shell's `exec`),
and, with SIGHUP ignored (`trap '' HUP`, as nohup does), the terminal failing under it. Either
way the turn is cancelled, the log sealed, the tool's processes ended and the app gone. And
should the orderly quit after a signal get stuck, the process still ends, giving the terminal
back (on a pseudo-terminal). Waits are bounded polling on observable conditions; nothing
asserts how long anything took.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.test_cli import _alive, _wait_for, session_logs, wait_until_dead
from tui_agent.ui.terminal_driver import _LEAVE

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

# A tool that ignores SIGTERM and leaves a child: only the end of its process group ends both.
STUBBORN = "trap '' TERM; sleep 600 & echo $! > child.pid; wait"


Tmux = Callable[..., str]


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    """`tmux ARGS` on a socket of this test's own (so no other tmux server is touched), with
    /bin/sh running the commands, from inside a tmux too; what it prints."""
    command = ["tmux", "-S", str(tmp_path / "tmux.sock")]
    env = {name: value for name, value in os.environ.items() if name != "TMUX"}
    env["SHELL"] = "/bin/sh"

    def run(*args: str) -> str:
        done = subprocess.run([*command, *args], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    yield run
    subprocess.run([*command, "kill-server"], capture_output=True, check=False, env=env)


def _start(tmux: Tmux, tmp_path: Path, before: str) -> tuple[int, Path]:
    """The app in a 100x30 tmux pane, told to run STUBBORN; its pid and workspace."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = tmp_path / "script.json"
    steps = [{"tool_calls": [{"name": "shell", "arguments": {"command": STUBBORN}}]}]
    script.write_text(json.dumps({"steps": steps}))
    app = [sys.executable, "-m", "tui_agent", "--workspace", str(workspace)]
    app += ["--provider", "scripted", "--script", str(script), "--yolo", "run it"]
    # Outside the sandbox: the test reads the tool's child pid as the host sees it (a sandboxed
    # command has pids of its own namespace); the sandbox's own kill on the agent's death is
    # tried in tests/tools/test_sandbox_attacks.py.
    app += ["--sandbox", "off"]
    # `exec`: the app takes the shell's place, so it leads the terminal's session.
    line = f"{before}exec {shlex.join(['env', 'TERM=xterm-256color', *app])}"
    tmux("new-session", "-d", "-s", "app", "-x", "100", "-y", "30", line)
    return int(tmux("display-message", "-p", "-t", "app", "#{pane_pid}")), workspace


@needs_tmux
@pytest.mark.parametrize("before", ["", "trap '' HUP; "], ids=["sighup", "sighup-ignored"])
def test_closing_the_terminal_mid_turn_cancels_seals_ends_the_tools_and_exits(
    tmux: Tmux, tmp_path: Path, before: str
) -> None:
    app, workspace = _start(tmux, tmp_path, before)
    try:
        child = int(_wait_for(workspace / "child.pid", timeout=60))
        tmux("kill-session", "-t", "app")
        wait_until_dead(app, limit_s=30)
    finally:
        if _alive(app):
            os.kill(app, signal.SIGKILL)
    wait_until_dead(child)
    [log] = session_logs()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    [result] = [r for r in records if r["type"] == "tool.result"]
    assert result["outcome"] == "aborted"
    assert records[-1]["type"] == "turn.end"
    assert records[-1]["result"]["type"] == "cancelled"


# The app with a quit that never ends, and a short deadline.
STUCK_QUIT = """
import asyncio, sys
from tui_agent.ui import run
from tui_agent.ui.app import TuiAgentApp

async def never(self):
    await asyncio.Event().wait()

TuiAgentApp._quit_sequence = never
run.QUIT_DEADLINE_S = 0.5
from tui_agent.entry import main
sys.argv[0] = "tui-agent"
sys.exit(main())
"""


def test_a_stuck_quit_still_ends_the_process_and_gives_the_terminal_back(tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    output = bytearray()
    drawn = threading.Event()

    def drain() -> None:  # the app blocks once the terminal's buffer is full
        with contextlib.suppress(OSError):
            while chunk := os.read(controller, 65536):
                output.extend(chunk)
                if b"Quit" in output:
                    drawn.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    proc = subprocess.Popen(
        [sys.executable, "-c", STUCK_QUIT, "--workspace", str(tmp_path)],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=env,
        start_new_session=True,
    )
    try:
        assert drawn.wait(timeout=60), "the app never drew its footer"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(terminal)
    reader.join(timeout=5)
    os.close(controller)
    assert output.endswith(_LEAVE.encode())  # main screen, cursor and modes back
