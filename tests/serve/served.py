"""`tui-agent serve` as a person starts it, in a process of its own, for the tests that need
real app processes behind it (the browser, signals, idle tabs, the session limit)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.test_cli import _wait_for

SECRET = "sk-served-secret-0123456789"  # an API key in the server's environment


@dataclass
class Served:
    url: str
    process: subprocess.Popen[str]
    workspace: Path

    def wait_for_file(self, name: str) -> str:
        return _wait_for(self.workspace / name, timeout=60)

    def wait_for_log_end(self) -> list[dict[str, Any]]:
        """The session log's records once its last is a turn's end (bounded polling)."""
        home = Path(os.environ["TUI_AGENT_HOME"])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for log in home.glob("sessions/*/events.jsonl"):
                records = [json.loads(line) for line in log.read_text().splitlines() if line]
                if records and records[-1]["type"] == "turn.end":
                    return records
            time.sleep(0.05)
        raise AssertionError("no session log ended with a turn's end")


@contextmanager
def serve(tmp_path: Path, steps: list[dict[str, Any]], *options: str) -> Iterator[Served]:
    """The server with the scripted model playing `steps` in every tab, commands unsandboxed
    (the tests read their files as the host sees them); stopped with SIGTERM at the end."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": steps}))
    command = [sys.executable, "-m", "tui_agent", "serve", "--port", "0", "--print-url"]
    command += ["--workspace", str(workspace), "--provider", "scripted", "--script", str(script)]
    command += ["--sandbox", "off", *options]
    with (tmp_path / "serve.err").open("w") as errors:
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env={**os.environ, "OPENAI_API_KEY": SECRET},
            start_new_session=True,
        )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), (tmp_path / "serve.err").read_text()
        yield Served(url, process, workspace)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
