"""Sessions from the command line: one writer per session, --fork, damaged logs."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path

import pytest

from tests.e2e.test_cli import (
    SLOW_SHELL,
    _start_shell_turn,
    _wait_for,
    run_cli,
    session_logs,
    tui_agent,
)
from tests.support.openai_server import scripted_openai_server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def test_a_second_continue_of_a_running_session_is_refused_and_can_fork(workspace: Path) -> None:
    with scripted_openai_server([SLOW_SHELL]) as server:
        first = _start_shell_turn(server, workspace)
        try:
            child = int(_wait_for(workspace / "child.pid"))
            with scripted_openai_server([{"text": "Forked."}]) as other:
                refused = run_cli(other, workspace, "--continue", "-p", "me too")
                forked = run_cli(other, workspace, "--continue", "--fork", "-p", "me too")
        finally:
            first.kill()
            first.communicate(timeout=10)
            with contextlib.suppress(ProcessLookupError):  # the reaper may have ended it already
                os.killpg(os.getpgid(child), signal.SIGKILL)
    assert refused.returncode == 2
    assert "is busy: it is open in another tui-agent (pid " in refused.stderr
    assert "add --fork to continue a copy of it as a new session" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert forked.returncode == 0, forked.stderr
    assert forked.stdout == "Forked.\n"
    assert "run it" in json.dumps(other.requests[0]["messages"])  # the copy has the history
    assert len(session_logs()) == 2


def test_fork_needs_a_session_to_copy() -> None:
    done = tui_agent("--fork", "-p", "hi")
    assert done.returncode == 2
    assert "--fork needs --continue or --resume" in done.stderr


def test_a_damaged_line_is_reported_and_the_session_still_continues(workspace: Path) -> None:
    with scripted_openai_server([{"text": "First."}, {"text": "Second."}]) as server:
        assert run_cli(server, workspace, "-p", "one").returncode == 0
        (log,) = session_logs()
        lines = log.read_text().splitlines(keepends=True)
        log.write_text("".join([*lines[:2], "{not a record\n", *lines[2:]]))
        again = run_cli(server, workspace, "--continue", "-p", "two")
    assert again.returncode == 0, again.stderr
    assert f"{log}: skipped line 3: not valid event records" in again.stderr
    assert "First." in json.dumps(server.requests[1]["messages"])


def test_a_log_that_is_a_folder_is_a_clear_message(workspace: Path) -> None:
    with scripted_openai_server([{"text": "First."}]) as server:
        assert run_cli(server, workspace, "-p", "one").returncode == 0
        (log,) = session_logs()
        log.unlink()
        log.mkdir()
        again = run_cli(server, workspace, "--continue", "-p", "two")
        listed = tui_agent("sessions", "--workspace", str(workspace))
    assert again.returncode == 2
    assert again.stderr == f"tui-agent: cannot read {log}: Is a directory\n"
    assert listed.returncode == 0 and "Traceback" not in listed.stderr
