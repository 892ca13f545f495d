"""The command line end to end: a real `tui-agent` process against a local OpenAI-compatible
server that replays scripted steps (tests/support/openai_server.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.openai_server import ScriptedOpenAIServer, scripted_openai_server

FAKE_KEY = "sk-test-RECOGNISABLE-0123456789abcdef"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("beta\n")
    return root


def run_cli(
    server: ScriptedOpenAIServer, workspace: Path, *args: str, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    return tui_agent(*cli_args(server, workspace), *args, timeout=timeout)


def tui_agent(
    *args: str, env: dict[str, str] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env or cli_env(),
        stdin=subprocess.DEVNULL,  # piped stdin would be read as context
    )


def cli_args(server: ScriptedOpenAIServer, workspace: Path) -> list[str]:
    return [
        "--provider",
        "openai",
        "--base-url",
        server.base_url,
        "--model",
        "test-model",
        "--workspace",
        str(workspace),
    ]


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["OPENAI_API_KEY"] = FAKE_KEY
    return env


def events_of(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def session_logs() -> list[Path]:
    home = Path(os.environ["TUI_AGENT_HOME"])
    return sorted(home.glob("sessions/*/events.jsonl"))


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "tool"]


def test_two_step_turn_pairs_parallel_tool_results_in_provider_order(workspace: Path) -> None:
    steps = [
        {
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": "a.txt"}},
                {"name": "read_file", "arguments": {"path": "b.txt"}},
            ]
        },
        {"text": "Both files read."},
    ]
    with scripted_openai_server(steps) as server:
        done = run_cli(server, workspace, "-p", "read both", "--output-format", "jsonl", "--yolo")
    assert done.returncode == 0, done.stderr
    events = events_of(done.stdout)
    assert [e["type"] for e in events if e["type"] == "tool.started"] == ["tool.started"] * 2
    finished = [e for e in events if e["type"] == "tool.finished"]
    assert {e["name"] for e in finished} == {"read_file"}
    last = events[-1]
    assert last["type"] == "turn.finished"
    assert last["text"] == "Both files read."
    assert last["result"]["type"] == "completed" and last["result"]["steps"] == 2
    results = tool_messages(server.requests[1])
    assert [m["tool_call_id"] for m in results] == ["call_1_0", "call_1_1"]
    assert "alpha" in results[0]["content"] and "beta" in results[1]["content"]


def test_text_mode_prints_the_final_answer_only(workspace: Path) -> None:
    with scripted_openai_server([{"text": "Hello there."}]) as server:
        done = run_cli(server, workspace, "-p", "say hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello there.\n"


def test_ask_mode_headless_says_each_denied_call_on_stderr(workspace: Path) -> None:
    steps = [
        {
            "tool_calls": [
                {"name": "shell", "arguments": {"command": "touch made.txt"}},
                {"name": "read_file", "arguments": {"path": "a.txt"}},
                {"name": "write_file", "arguments": {"path": "c.txt", "content": "x"}},
            ]
        },
        {"text": "I could not run those."},
    ]
    for output in ("text", "jsonl"):
        with scripted_openai_server(steps) as server:
            done = run_cli(server, workspace, "-p", "go", "--output-format", output)
        assert done.returncode == 0, done.stderr
        denied = [line for line in done.stderr.splitlines() if "denied" in line]
        assert len(denied) == 2, done.stderr  # the read ran without asking
        assert "shell" in denied[0] and "touch made.txt" in denied[0] and "--yolo" in denied[0]
        assert "write_file" in denied[1] and "c.txt" in denied[1]
        assert not (workspace / "made.txt").exists() and not (workspace / "c.txt").exists()
        if output == "jsonl":
            statuses = [e["status"] for e in events_of(done.stdout) if e["type"] == "tool.finished"]
            assert sorted(statuses) == ["denied", "denied", "done"]
        else:
            assert done.stdout == "I could not run those.\n"


def test_empty_response_is_retried_then_succeeds(workspace: Path) -> None:
    with scripted_openai_server([{"empty": True}, {"text": "Second time lucky."}]) as server:
        done = run_cli(server, workspace, "-p", "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Second time lucky."
    assert len(server.requests) == 2


def test_rate_limit_retry_after_is_honoured(workspace: Path) -> None:
    steps = [
        {
            "status": 429,
            "headers": {"Retry-After": "1"},
            "body": {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}},
        },
        {"text": "ok"},
    ]
    with scripted_openai_server(steps) as server:
        done = run_cli(server, workspace, "-p", "hello")
    assert done.returncode == 0, done.stderr
    assert server.times[1] - server.times[0] >= 1.0
    assert "retrying" in done.stderr


def test_running_out_of_steps_fails_with_max_steps_exceeded(workspace: Path) -> None:
    endless = {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*.txt"}}]}
    with scripted_openai_server([endless] * 6) as server:
        done = run_cli(
            server, workspace, "-p", "loop", "--max-steps", "2", "--output-format", "jsonl"
        )
    assert done.returncode == 1
    last = events_of(done.stdout)[-1]
    assert last["type"] == "turn.finished"
    assert last["result"]["type"] == "failed"
    assert last["result"]["error"]["code"] == "loop.max_steps_exceeded"
    assert len(server.requests) == 2


def test_context_overflow_compacts_and_succeeds(workspace: Path) -> None:
    with scripted_openai_server([{"text": "Noted: the code word is heron."}]) as server:
        assert run_cli(server, workspace, "-p", "the code word is heron").returncode == 0
    overflow = {
        "status": 400,
        "body": {
            "error": {
                "message": "This model's maximum context length is 128000 tokens.",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        },
    }
    summary = "SUMMARY: the user set the code word heron."
    steps = [overflow, {"text": summary}, {"text": "Hi again."}]
    with scripted_openai_server(steps) as server:
        done = run_cli(server, workspace, "--continue", "-p", "say hi", "--output-format", "jsonl")
    assert done.returncode == 0, done.stderr
    events = events_of(done.stdout)
    assert events[-1]["text"] == "Hi again."
    assert any(e["type"] == "compacted" for e in events)
    final_request = json.dumps(server.requests[2]["messages"])
    assert summary in final_request and "say hi" in final_request
    assert "Noted: the code word is heron." not in final_request


def test_continue_resumes_the_latest_session_of_the_workspace(workspace: Path) -> None:
    with scripted_openai_server([{"text": "Noted: the code word is heron."}]) as server:
        first = run_cli(server, workspace, "-p", "the code word is heron")
    assert first.returncode == 0, first.stderr
    with scripted_openai_server([{"text": "It was heron."}]) as server:
        second = run_cli(server, workspace, "--continue", "-p", "what was the code word?")
        assert second.returncode == 0, second.stderr
        sent = json.dumps(server.requests[0]["messages"])
    assert "the code word is heron" in sent and "Noted: the code word is heron." in sent
    assert len(session_logs()) == 1


def _wait_for(path: Path, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


def wait_until_dead(pid: int, limit_s: float = 10) -> None:
    """Bounded polling on an observable condition (a hang guard, not a timing assertion)."""
    deadline = time.monotonic() + limit_s
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), f"process {pid} is still alive"


def _start_shell_turn(server: ScriptedOpenAIServer, workspace: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tui_agent",
            *cli_args(server, workspace),
            "--yolo",
            *("--sandbox", "off"),  # the test reads the command's host pid (see the attack suite)
            "-p",
            "run it",
            "--output-format",
            "jsonl",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )


SLOW_SHELL = {
    "tool_calls": [
        {
            "name": "shell",
            "arguments": {"command": "sleep 30 & echo $! > child.pid; sleep 30; wait"},
        }
    ]
}


def test_sigint_during_a_shell_tool_cancels_exits_130_and_pairs_an_aborted_result(
    workspace: Path,
) -> None:
    with scripted_openai_server([SLOW_SHELL]) as server:
        proc = _start_shell_turn(server, workspace)
        child = int(_wait_for(workspace / "child.pid"))
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 130, stderr
    assert events_of(stdout)[-1]["result"]["type"] == "cancelled"
    wait_until_dead(child)
    with scripted_openai_server([{"text": "Understood."}]) as server:
        again = run_cli(server, workspace, "--continue", "-p", "what happened?")
        assert again.returncode == 0, again.stderr
        results = tool_messages(server.requests[0])
    assert len(results) == 1 and results[0]["tool_call_id"] == "call_1_0"
    assert "interrupted" in results[0]["content"].lower()


def test_kill_9_during_a_tool_is_repaired_on_continue(workspace: Path) -> None:
    with scripted_openai_server([SLOW_SHELL]) as server:
        proc = _start_shell_turn(server, workspace)
        child = int(_wait_for(workspace / "child.pid"))
        proc.kill()
        proc.communicate(timeout=10)
    wait_until_dead(child)  # the reaper ended the tool's processes for the killed agent
    with scripted_openai_server([{"text": "Recovered."}]) as server:
        again = run_cli(server, workspace, "--continue", "-p", "go on")
        assert again.returncode == 0, again.stderr
        results = tool_messages(server.requests[0])
    assert len(results) == 1
    assert "interrupted before its result was recorded" in results[0]["content"]


def test_a_torn_final_log_line_is_ignored_on_continue(workspace: Path) -> None:
    with scripted_openai_server([{"text": "First."}]) as server:
        assert run_cli(server, workspace, "-p", "one").returncode == 0
    (log,) = session_logs()
    with log.open("a") as handle:
        handle.write('{"type": "step.begin", "uuid": "torn", "tur')
    with scripted_openai_server([{"text": "Second."}]) as server:
        again = run_cli(server, workspace, "--continue", "-p", "two")
        assert again.returncode == 0, again.stderr
        sent = json.dumps(server.requests[0]["messages"])
    assert "First." in sent


def test_the_event_log_never_contains_the_api_key(workspace: Path) -> None:
    steps = [
        {
            "status": 401,
            "body": {
                "error": {
                    "message": f"Incorrect API key provided: {FAKE_KEY}",
                    "code": "invalid_api_key",
                }
            },
        }
    ]
    with scripted_openai_server(steps) as server:
        done = run_cli(server, workspace, "-p", "hello")
    assert done.returncode == 1
    assert FAKE_KEY not in done.stderr and FAKE_KEY not in done.stdout
    for log in session_logs():
        assert FAKE_KEY not in log.read_text()


def test_sessions_lists_this_workspaces_sessions(workspace: Path) -> None:
    with scripted_openai_server([{"text": "Hi."}]) as server:
        assert run_cli(server, workspace, "-p", "first prompt here").returncode == 0
    listed = tui_agent("sessions", "--workspace", str(workspace))
    assert listed.returncode == 0
    assert "first prompt here" in listed.stdout


def test_a_bad_flag_is_a_usage_error(workspace: Path) -> None:
    done = tui_agent("--no-such-flag")
    assert done.returncode == 2
    assert "--no-such-flag" in done.stderr


def test_a_broken_config_file_is_a_usage_error_naming_the_file(workspace: Path) -> None:
    config = Path(os.environ["TUI_AGENT_HOME"]) / "config.toml"
    config.write_text("default_model = [unclosed\n")
    done = tui_agent("-p", "hi", "--workspace", str(workspace))
    assert done.returncode == 2
    assert "config.toml" in done.stderr


def test_the_demo_runs_offline_without_a_key(workspace: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = tui_agent("-p", "show me around", "--workspace", str(workspace), env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "demo" in done.stderr.lower()
    assert "OPENAI_API_KEY" in done.stdout  # the tour ends by saying how to use a real model
    # a headless run cannot ask, so the demo's proposed edit was denied, not written
    assert not (workspace / "NOTES-tui-agent-demo.md").exists()


def test_an_unreadable_script_is_a_usage_error(workspace: Path, tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text("{not json")
    done = tui_agent("-p", "hi", "--script", str(script), "--workspace", str(workspace))
    assert done.returncode == 2
    assert "bad.json" in done.stderr
    assert not session_logs()  # nothing was started
