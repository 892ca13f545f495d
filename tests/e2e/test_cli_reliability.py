"""The command line under hostile conditions, as real processes: keys a tool tries to read,
signals, kill -9, and prompts too big for the argument list.

Waits are bounded polling on observable conditions (a file appears, a process is gone, a line
is printed); none asserts how long anything took.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.e2e.test_cli import (
    FAKE_KEY,
    _wait_for,
    cli_args,
    cli_env,
    events_of,
    session_logs,
    tool_messages,
    wait_until_dead,
)
from tests.support.openai_server import ScriptedOpenAIServer, scripted_openai_server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def shell_step(command: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}


def start(
    server: ScriptedOpenAIServer,
    workspace: Path,
    *args: str,
    env: dict[str, str] | None = None,
    stdin: int = subprocess.DEVNULL,
    prefix: Sequence[str] = (),
) -> subprocess.Popen[str]:
    # Without the sandbox: these tests are about what stands where there is none (process
    # groups, the reaper, keys kept from the environment), and they read host process ids.
    # tests/tools/test_sandbox_attacks.py tries the same attacks against the sandbox.
    unsandboxed = ("--sandbox", "off")
    return subprocess.Popen(
        [
            *prefix,
            sys.executable,
            "-m",
            "tui_agent",
            *cli_args(server, workspace),
            "--yolo",
            *unsandboxed,
            *args,
        ],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env or cli_env(),
    )


# -- keys ------------------------------------------------------------------------------------------

SNOOP = (
    "echo ENV:; env; "
    "echo PARENT:; { tr '\\0' '\\n' < /proc/$PPID/environ || echo UNREADABLE; } 2>/dev/null; "
    "echo AGENT:; { tr '\\0' '\\n' < /proc/$(cut -d' ' -f4 /proc/$$/stat)/environ "
    "|| echo UNREADABLE; } 2>/dev/null"
)


# Root reads any process's environ, so run as root the test checks that the re-exec left the
# block without keys; run unprivileged it checks that the agent, non-dumpable, cannot be read at
# all. As root both are checked: the second in a user namespace where the agent is uid 65534.
UNPRIVILEGED = ("unshare", "--user", "--map-user=65534", "--map-group=65534")


def _unprivileged_prefix() -> Sequence[str]:
    if os.geteuid() != 0:
        pytest.skip("this run is unprivileged already: the other case covers it")
    if subprocess.run([*UNPRIVILEGED, "true"], capture_output=True).returncode != 0:
        pytest.skip("no user namespaces here to run the agent unprivileged")
    return UNPRIVILEGED


@pytest.mark.parametrize("unprivileged", [False, True], ids=["as-is", "unprivileged"])
def test_no_key_reaches_a_tool_nor_the_agents_proc_environ(
    workspace: Path, unprivileged: bool
) -> None:
    prefix = _unprivileged_prefix() if unprivileged else ()
    readable = os.geteuid() == 0 and not unprivileged
    config = Path(os.environ["TUI_AGENT_HOME"]) / "config.toml"
    secrets = {
        "MY_LLM_CREDENTIAL": "sk-custom-CREDENTIAL-0123456789",  # named by api_key_env
        "GITHUB_TOKEN": "ghp_TOKEN-0123456789",  # *_TOKEN
        "DEPLOY_SECRET": "SECRET-0123456789",  # *_SECRET
        "OPENAI_API_KEY": FAKE_KEY,
    }
    with scripted_openai_server([shell_step(SNOOP), {"text": "Seen."}]) as server:
        config.write_text('[providers.openai]\nkind="openai"\napi_key_env="MY_LLM_CREDENTIAL"\n')
        env = {**cli_env(), **secrets}
        proc = start(server, workspace, "-p", "look", env=env, prefix=prefix)
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 0, stderr
        [result] = tool_messages(server.requests[1])
        sent_key = server.headers[0]["authorization"]
    output = result["content"]
    env_part, rest = output.split("PARENT:")
    parent, agent = rest.split("AGENT:")
    assert "PATH=" in env_part
    for environ in (parent, agent):
        if readable:  # root reads it: the re-exec must have left it without keys (below)
            assert "PATH=" in environ
        else:  # the agent is non-dumpable: not even its own user reads its environ
            assert "UNREADABLE" in environ and "PATH=" not in environ
    for name, value in secrets.items():
        assert value not in output, name
    assert sent_key == f"Bearer {secrets['MY_LLM_CREDENTIAL']}"  # the agent still has its key
    for log in session_logs():
        assert not any(value in log.read_text() for value in secrets.values())


# -- signals and process groups -------------------------------------------------------------------

STUBBORN_SHELL = shell_step(
    # The tool ignores SIGTERM (and its children inherit that), so only SIGKILL ends it.
    "trap '' TERM; sleep 600 & echo $! > child.pid; wait"
)


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_cancel_the_turn_end_its_tools_and_exit(
    workspace: Path, signum: int, status: int
) -> None:
    with scripted_openai_server([STUBBORN_SHELL]) as server:
        proc = start(server, workspace, "-p", "run it", "--output-format", "jsonl")
        child = int(_wait_for(workspace / "child.pid"))
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == status, stderr
    assert events_of(stdout)[-1]["result"]["type"] == "cancelled"
    wait_until_dead(child)


def test_a_second_sigint_exits_at_once_and_still_kills_the_tools(workspace: Path) -> None:
    with scripted_openai_server([STUBBORN_SHELL]) as server:
        proc = start(server, workspace, "-p", "run it")
        child = int(_wait_for(workspace / "child.pid"))
        proc.send_signal(signal.SIGINT)
        assert proc.stderr is not None
        for line in proc.stderr:  # the first one is being handled: the cancel has begun
            if "cancelling" in line:
                break
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert proc.returncode == 130
    wait_until_dead(child)


def test_kill_9_of_the_agent_kills_its_background_tools_too(workspace: Path) -> None:
    steps = [
        {
            "tool_calls": [
                {
                    "name": "shell",
                    "arguments": {
                        "command": "sleep 600 & echo $! > server.pid; wait",
                        "background": True,
                    },
                }
            ]
        },
        shell_step("sleep 600 & echo $! > child.pid; wait"),
    ]
    with scripted_openai_server(steps) as server:
        proc = start(server, workspace, "-p", "run it")
        detached = int(_wait_for(workspace / "server.pid"))
        child = int(_wait_for(workspace / "child.pid"))
        proc.kill()
        proc.communicate(timeout=10)
    wait_until_dead(child)
    wait_until_dead(detached)


# -- prompts from stdin ---------------------------------------------------------------------------


def user_text(server: ScriptedOpenAIServer) -> str:
    return str(
        next(m for m in reversed(server.requests[0]["messages"]) if m["role"] == "user")["content"]
    )


def test_p_dash_reads_a_prompt_longer_than_the_argument_limit_from_stdin(
    workspace: Path, tmp_path: Path
) -> None:
    prompt = "Summarise these lines.\n" + "".join(f"line {n}\n" for n in range(40_000))
    assert len(prompt.encode()) > 300_000  # far past one argument's 128 KiB
    source = tmp_path / "prompt.txt"
    source.write_text(prompt)
    with scripted_openai_server([{"text": "Summarised."}]) as server, source.open() as stdin:
        proc = start(server, workspace, "-p", "-", stdin=stdin.fileno())
        stdout, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 0, stderr
        assert user_text(server) == prompt
    assert stdout == "Summarised.\n"


def test_piped_stdin_is_attached_to_the_prompt_as_context(workspace: Path) -> None:
    with scripted_openai_server([{"text": "A disk is full."}]) as server:
        proc = start(server, workspace, "-p", "explain", stdin=subprocess.PIPE)
        _, stderr = proc.communicate("ERROR: no space left on device\n", timeout=60)
        assert proc.returncode == 0, stderr
        assert user_text(server) == ("explain\n\n<stdin>\nERROR: no space left on device\n</stdin>")


def test_a_terminal_on_stdin_is_never_read(workspace: Path) -> None:
    controller, terminal = pty.openpty()
    try:
        with scripted_openai_server([{"text": "Hi."}]) as server:
            proc = start(server, workspace, "-p", "hello", stdin=terminal)
            _, stderr = proc.communicate(timeout=60)  # reading it would hang here
            assert proc.returncode == 0, stderr
            assert user_text(server) == "hello"
            refused = start(server, workspace, "-p", "-", stdin=terminal)
            _, stderr = refused.communicate(timeout=60)
        assert refused.returncode == 2
        assert "-p -" in stderr
    finally:
        os.close(controller)
        os.close(terminal)


def test_events_name_the_prompt_that_came_from_stdin(workspace: Path) -> None:
    with scripted_openai_server([{"text": "Ok."}]) as server:
        proc = start(server, workspace, "-p", "-", "--output-format=jsonl", stdin=subprocess.PIPE)
        stdout, stderr = proc.communicate("from a pipe", timeout=60)
    assert proc.returncode == 0, stderr
    assert json.dumps("from a pipe") in stdout


def test_sigterm_to_the_full_screen_app_cancels_ends_its_tools_and_exits(workspace: Path) -> None:
    controller, terminal = pty.openpty()
    output = bytearray()

    def drain() -> None:  # the app blocks once the terminal's buffer is full
        with contextlib.suppress(OSError):
            while chunk := os.read(controller, 65536):
                output.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    with scripted_openai_server([STUBBORN_SHELL]) as server:
        env = {**cli_env(), "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "tui_agent", *cli_args(server, workspace), "--yolo"),
                *("--sandbox", "off"),  # the test reads the command's host pid
                "run it",
            ],
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            env=env,
            start_new_session=True,  # the pty becomes its controlling terminal
        )
        try:
            child = int(_wait_for(workspace / "child.pid", timeout=60))
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 143
        finally:
            if proc.poll() is None:
                proc.kill()
            os.close(terminal)
    wait_until_dead(child)
    os.close(controller)
    reader.join(timeout=5)


# -- streams and retries --------------------------------------------------------------------------


def test_an_answer_cut_off_mid_stream_is_retried_never_printed(workspace: Path) -> None:
    steps = [{"text": "The answer is forty", "cut": True}, {"text": "The answer is 42."}]
    with scripted_openai_server(steps) as server:
        proc = start(server, workspace, "-p", "answer")
        stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert stdout == "The answer is 42.\n"
    assert "llm.incomplete: retrying" in stderr and len(server.requests) == 2


def test_a_refused_port_fails_after_three_attempts(workspace: Path) -> None:
    with scripted_openai_server([]) as server:
        args = cli_args(server, workspace)
    # The server is gone: its port now refuses connections.
    proc = subprocess.run(
        [sys.executable, "-m", "tui_agent", *args, "-p", "hi"],
        capture_output=True,
        text=True,
        timeout=60,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1
    assert proc.stderr.count("llm.unreachable: retrying") == 2
    assert "(attempt 3/3)" in proc.stderr
    assert "llm.unreachable: cannot reach the server: connection refused" in proc.stderr


def test_a_retry_after_of_a_day_fails_at_once_saying_when(workspace: Path) -> None:
    limited = {
        "status": 429,
        "headers": {"Retry-After": "86400"},
        "body": {"error": {"message": "Daily limit reached", "type": "rate_limit_error"}},
    }
    with scripted_openai_server([limited]) as server:
        proc = start(server, workspace, "-p", "hi")
        _, stderr = proc.communicate(timeout=60)
        assert len(server.requests) == 1
    assert proc.returncode == 1
    assert "llm.rate_limit: Daily limit reached (retry after " in stderr
    assert "retrying" not in stderr


def test_the_retry_budget_from_config_toml_bounds_a_persistent_5xx(workspace: Path) -> None:
    config = Path(os.environ["TUI_AGENT_HOME"]) / "config.toml"
    config.write_text("retry_budget_s = 1\n")  # a backoff of 0.5 s (+ jitter), then what is left
    failing = {"status": 502, "body": {"error": {"message": "Bad gateway"}}}
    with scripted_openai_server([failing] * 5) as server:
        proc = start(server, workspace, "-p", "hi")
        _, stderr = proc.communicate(timeout=60)
        assert len(server.requests) == 3
    assert proc.returncode == 1
    assert stderr.count("llm.status: retrying") == 2
    assert "llm.status: Bad gateway" in stderr


def test_a_run_under_nohup_ignores_sighup(workspace: Path) -> None:
    steps = [shell_step("echo started > started; sleep 1"), {"text": "Finished anyway."}]
    with scripted_openai_server(steps) as server:
        command = [sys.executable, "-m", "tui_agent", *cli_args(server, workspace), "-p", "go"]
        proc = subprocess.Popen(
            ["nohup", *command, "--yolo"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
        )
        _wait_for(workspace / "started")
        proc.send_signal(signal.SIGHUP)
        stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert stdout == "Finished anyway.\n"
