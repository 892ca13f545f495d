"""MCP servers through the real command line: servers nobody here wrote (`mcp-server-time`,
`mcp-server-git`, installed as dev dependencies) and the in-test fixture server, driven by the
local OpenAI-compatible server's scripted model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_cli import cli_args, cli_env, events_of, run_cli, tool_messages, tui_agent
from tests.support.openai_server import scripted_openai_server

BIN = Path(sys.executable).parent
FIXTURE = str(Path(__file__).parents[1] / "support" / "mcp_server.py")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def _mcp_json(workspace: Path, servers: dict[str, object]) -> None:
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def _config_toml(text: str) -> None:
    (Path(os.environ["TUI_AGENT_HOME"]) / "config.toml").write_text(text)


def _offered(request: dict[str, object]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", [])}  # type: ignore[attr-defined]


def test_a_claude_code_mcp_json_server_answers_into_history(workspace: Path) -> None:
    _mcp_json(workspace, {"time": {"command": str(BIN / "mcp-server-time"), "args": []}})
    steps = [
        {"tool_calls": [{"name": "mcp__time__get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"text": "It is now."},
    ]
    with scripted_openai_server(steps) as server:
        done = run_cli(
            server,
            workspace,
            "-p",
            "what time is it",
            "--output-format",
            "jsonl",
            "--yolo",
            timeout=60,
        )

    assert done.returncode == 0, done.stderr
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= _offered(
        server.requests[0]
    )
    [result] = tool_messages(server.requests[1])
    answer = json.loads(result["content"])
    assert answer["timezone"] == "UTC" and "datetime" in answer
    finished = [e for e in events_of(done.stdout) if e["type"] == "tool.finished"]
    assert finished[0]["name"] == "mcp__time__get_current_time"


def test_a_config_toml_server_is_trusted_and_reads_a_git_repository(workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(workspace)], check=True)
    _config_toml(f'[mcp_servers.git]\ncommand = "{BIN / "mcp-server-git"}"\n')
    call = {"name": "mcp__git__git_status", "arguments": {"repo_path": str(workspace)}}
    steps = [{"tool_calls": [call]}, {"text": "Clean."}]
    with scripted_openai_server(steps) as server:
        done = run_cli(server, workspace, "-p", "git status?", "--yolo", timeout=60)

    assert done.returncode == 0, done.stderr
    assert "mcp__git__git_log" in _offered(server.requests[0])
    [result] = tool_messages(server.requests[1])
    assert "trunk" in result["content"]


def test_headless_skips_unapproved_workspace_servers_and_says_so(workspace: Path) -> None:
    _mcp_json(workspace, {"time": {"command": str(BIN / "mcp-server-time")}})
    _config_toml(f'[mcp_servers.fx]\ncommand = "{sys.executable}"\nargs = ["{FIXTURE}"]\n')
    with scripted_openai_server([{"text": "ok"}]) as server:
        done = run_cli(server, workspace, "-p", "hi", timeout=60)

    assert done.returncode == 0, done.stderr
    assert "MCP servers from .mcp.json skipped: time" in done.stderr
    assert "--yolo" in done.stderr
    offered = _offered(server.requests[0])
    assert "mcp__fx__echo" in offered
    assert not any(name.startswith("mcp__time__") for name in offered)


def test_large_mcp_output_is_spilled_like_a_builtins(workspace: Path) -> None:
    _config_toml(f'[mcp_servers.fx]\ncommand = "{sys.executable}"\nargs = ["{FIXTURE}"]\n')
    steps = [{"tool_calls": [{"name": "mcp__fx__big", "arguments": {}}]}, {"text": "Big."}]
    with scripted_openai_server(steps) as server:
        done = run_cli(server, workspace, "-p", "big", "--yolo", timeout=60)

    assert done.returncode == 0, done.stderr
    [result] = tool_messages(server.requests[1])
    assert "output_path:" in result["content"] and len(result["content"]) < 20_000
    spilled = result["content"].split("output_path: ", 1)[1].splitlines()[0]
    assert Path(spilled).stat().st_size > 200_000


def test_a_key_variable_reaches_the_server_it_is_given_to_and_no_other(workspace: Path) -> None:
    _config_toml(
        f'[mcp_servers.fx]\ncommand = "{sys.executable}"\nargs = ["{FIXTURE}"]\n'
        'env = { FX_TOKEN = "${FX_TOKEN}" }\n'
        f'[mcp_servers.other]\ncommand = "{sys.executable}"\nargs = ["{FIXTURE}"]\n'
    )
    calls = [
        {"name": "mcp__fx__env", "arguments": {"name": "FX_TOKEN"}},
        {"name": "mcp__other__env", "arguments": {"name": "FX_TOKEN"}},
    ]
    steps = [{"tool_calls": calls}, {"text": "ok"}]
    with scripted_openai_server(steps) as server:
        done = tui_agent(
            *cli_args(server, workspace),
            "-p",
            "env",
            "--yolo",
            env={**cli_env(), "FX_TOKEN": "tok-123"},
            timeout=60,
        )

    assert done.returncode == 0, done.stderr
    given, other = tool_messages(server.requests[1])
    assert (given["content"], other["content"]) == ("tok-123", "(unset)")


def test_a_mistake_in_config_toml_names_the_file_server_and_key(workspace: Path) -> None:
    _config_toml('[mcp_servers.docs]\nurl = "https://example.com/${DOCS_HOST_UNSET}/mcp"\n')
    with scripted_openai_server([]) as server:
        done = run_cli(server, workspace, "-p", "hi")

    assert done.returncode == 2
    assert "config.toml: mcp_servers.docs.url: ${DOCS_HOST_UNSET} is not set" in done.stderr


def test_a_skipped_servers_secret_is_never_printed_expanded(workspace: Path) -> None:
    args = ["--password", "${DEPLOY_PASSWORD}"]
    _mcp_json(workspace, {"deploy": {"command": str(BIN / "mcp-server-time"), "args": args}})
    with scripted_openai_server([{"text": "ok"}]) as server:
        done = tui_agent(
            *cli_args(server, workspace),
            "-p",
            "hi",
            "--output-format",
            "jsonl",
            env={**cli_env(), "DEPLOY_PASSWORD": "hunter2-secret"},
            timeout=60,
        )

    assert done.returncode == 0, done.stderr
    assert "hunter2" not in done.stdout + done.stderr
    servers = [e for e in events_of(done.stdout) if e.get("type") == "mcp.servers"]
    assert servers, "no MCP status event"
    assert "${DEPLOY_PASSWORD}" in json.dumps(servers[-1])


def test_a_tool_a_call_added_is_offered_and_found_in_the_next_step(workspace: Path) -> None:
    _config_toml(f'[mcp_servers.fx]\ncommand = "{sys.executable}"\nargs = ["{FIXTURE}", "stdio"]\n')
    steps = [
        {"tool_calls": [{"name": "mcp__fx__learn", "arguments": {"name": "fresh"}}]},
        {"tool_calls": [{"name": "mcp__fx__fresh", "arguments": {}}]},
        {"text": "Used it."},
    ]
    with scripted_openai_server(steps) as server:
        done = run_cli(server, workspace, "-p", "learn", "--yolo", timeout=60)

    assert done.returncode == 0, done.stderr
    assert "mcp__fx__fresh" not in _offered(server.requests[0])
    assert "mcp__fx__fresh" in _offered(server.requests[1])  # tools/list_changed was heard
    assert tool_messages(server.requests[2])[-1]["content"] == "fresh works"
