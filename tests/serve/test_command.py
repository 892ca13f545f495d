"""`tui-agent serve`'s command line: mistakes are reported before anything listens (exit
status 2, one line naming the problem), including in the app's options it passes on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tui_agent import cli


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["a prompt"], "serve takes no prompt"),
        (["-p", "a prompt"], "serve takes no prompt"),
        (["--approval-mode", "sometimes"], "invalid choice: 'sometimes'"),
        (["--workspace", "/no/such/dir"], "is not a directory"),
        (["--max-sessions", "0"], "--max-sessions must be 1 or more"),
        (["--idle-timeout", "-1"], "--idle-timeout must be 0 (never) or more"),
    ],
)
def test_a_mistake_is_reported_before_serving(
    argv: list[str], problem: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert cli.main(["serve", "--port", "0", *argv]) == 2
    error = capsys.readouterr().err
    assert error.startswith("tui-agent serve: ") and problem in error


def test_a_fixed_token_must_be_long_enough(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TUI_AGENT_SERVE_TOKEN", "short")
    assert cli.main(["serve", "--port", "0"]) == 2
    assert "TUI_AGENT_SERVE_TOKEN must be at least 16 characters" in capsys.readouterr().err


def test_a_fixed_token_is_used_and_a_host_beyond_loopback_is_warned_about(tmp_path: Path) -> None:
    token = "a-token-for-scripts-0123456789"
    env = {**os.environ, "TUI_AGENT_SERVE_TOKEN": token}
    command = [sys.executable, "-m", "tui_agent", "serve", "--print-url", "--port", "0"]
    command += ["--host", "0.0.0.0", "--workspace", str(tmp_path)]
    with (tmp_path / "err").open("w") as errors:
        server = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=errors, text=True, env=env
        )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
    assert url.startswith("http://0.0.0.0:") and url.endswith(f"/?token={token}")
    assert "warning: listening on 0.0.0.0, not only this machine" in (tmp_path / "err").read_text()
