"""Closing the terminal ends the full-screen app: the app runs in tmux (a server of its own, on
its own socket), a turn is running a tool, and `tmux kill-session` hangs the terminal up.

Two ways the app learns it: SIGHUP (it leads the terminal's session, as under a shell's `exec`),
and, with SIGHUP ignored (`trap '' HUP`, as nohup does), the terminal failing under it. Either
way the turn is cancelled, the log sealed, the tool's processes ended and the app gone. Waits
are bounded polling on observable conditions; nothing asserts how long anything took.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_cli import _alive, _wait_for, session_logs, wait_until_dead

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

# A tool that ignores SIGTERM and leaves a child: only the end of its process group ends both.
STUBBORN = "trap '' TERM; sleep 600 & echo $! > child.pid; wait"


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[list[str]]:
    """`tmux` on a socket of this test's own, so no other tmux server is touched."""
    command = ["tmux", "-S", str(tmp_path / "tmux.sock")]
    yield command
    subprocess.run([*command, "kill-server"], capture_output=True, check=False)


def _start(tmux: list[str], tmp_path: Path, before: str) -> tuple[int, Path]:
    """The app in a 100x30 tmux pane, told to run STUBBORN; its pid and workspace."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = tmp_path / "script.json"
    steps = [{"tool_calls": [{"name": "shell", "arguments": {"command": STUBBORN}}]}]
    script.write_text(json.dumps({"steps": steps}))
    app = [sys.executable, "-m", "tui_agent", "--workspace", str(workspace)]
    app += ["--provider", "scripted", "--script", str(script), "--yolo", "run it"]
    # `exec`: the app takes the shell's place, so it leads the terminal's session.
    line = f"{before}exec {shlex.join(['env', 'TERM=xterm-256color', *app])}"
    subprocess.run(
        [*tmux, "new-session", "-d", "-s", "app", "-x", "100", "-y", "30", line], check=True
    )
    shown = subprocess.run(
        [*tmux, "display-message", "-p", "-t", "app", "#{pane_pid}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(shown.stdout), workspace


@pytest.mark.parametrize("before", ["", "trap '' HUP; "], ids=["sighup", "sighup-ignored"])
def test_closing_the_terminal_mid_turn_cancels_seals_ends_the_tools_and_exits(
    tmux: list[str], tmp_path: Path, before: str
) -> None:
    app, workspace = _start(tmux, tmp_path, before)
    try:
        child = int(_wait_for(workspace / "child.pid", timeout=60))
        subprocess.run([*tmux, "kill-session", "-t", "app"], check=True)
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
