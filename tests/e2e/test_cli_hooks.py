"""Hooks through the real command line (`-p`): a script written for Claude Code works unchanged,
and a repository's hooks run only once trusted (an earlier answer or --yolo), asked again when
they change; what was skipped is named on stderr."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from tests.e2e.test_cli import run_cli, tool_messages
from tests.support.hook_scripts import recorded, recorder
from tests.support.openai_server import scripted_openai_server
from tui_agent.session import LoopConfig
from tui_agent.session._repository import read_setup, trust_all

# The guard people copy from Claude Code's docs: reads .tool_input.command without jq.
CLAUDE_GUARD = f"{shlex.quote(sys.executable)} -c " + shlex.quote(
    "import json, sys\n"
    "cmd = json.load(sys.stdin)['tool_input']['command']\n"
    "if 'rm -rf' in cmd:\n"
    "    print('Blocked: rm -rf is not allowed here', file=sys.stderr)\n"
    "    sys.exit(2)\n"
)
SHELL_LOGGER = 'read -r line; printf "%s\\n" "$line" >> "$CLAUDE_PROJECT_DIR/../shell-hook.log"'


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def _settings(path: Path, hooks: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))


def _group(command: str, matcher: str = "") -> list[dict[str, object]]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]


def test_a_claude_code_guard_script_works_unchanged(workspace: Path, tmp_path: Path) -> None:
    user = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json"
    _settings(user, {"PreToolUse": _group(CLAUDE_GUARD, "Bash"), "Stop": _group(SHELL_LOGGER)})
    (workspace / "keep.txt").write_text("precious")
    call = {"name": "shell", "arguments": {"command": "rm -rf keep.txt"}}
    with scripted_openai_server([{"tool_calls": [call]}, {"text": "I could not."}]) as server:
        done = run_cli(server, workspace, "-p", "clean up", "--yolo")

    assert done.returncode == 0, done.stderr
    assert (workspace / "keep.txt").exists()
    [result] = tool_messages(server.requests[1])
    assert "Blocked: rm -rf is not allowed here" in result["content"]
    [stop] = [json.loads(line) for line in (tmp_path / "shell-hook.log").read_text().splitlines()]
    assert stop["hook_event_name"] == "Stop" and stop["last_assistant_message"] == "I could not."


def test_an_untrusted_project_hook_is_skipped_and_named_and_yolo_runs_it(
    workspace: Path, tmp_path: Path
) -> None:
    command, log = recorder(tmp_path, "context")
    _settings(workspace / ".claude" / "settings.json", {"UserPromptSubmit": _group(command)})

    with scripted_openai_server([{"text": "one"}]) as server:
        untrusted = run_cli(server, workspace, "-p", "first")
    assert untrusted.returncode == 0, untrusted.stderr
    assert recorded(log) == []
    assert "Not trusted, so skipped: hook UserPromptSubmit" in untrusted.stderr
    assert "--yolo" in untrusted.stderr

    with scripted_openai_server([{"text": "two"}]) as server:
        run_cli(server, workspace, "-p", "second", "--yolo")
    assert [entry["prompt"] for entry in recorded(log)] == ["second"]
    assert "the build command is make" in json.dumps(server.requests[0]["messages"])


def test_a_trusted_project_hook_runs_until_it_changes(workspace: Path, tmp_path: Path) -> None:
    command, log = recorder(tmp_path)
    project = workspace / ".claude" / "settings.json"
    _settings(project, {"UserPromptSubmit": _group(command)})
    trust_all(read_setup(LoopConfig(workspace=workspace)).items())  # as the app's prompt does

    with scripted_openai_server([{"text": "one"}]) as server:
        trusted = run_cli(server, workspace, "-p", "first")
    assert [entry["prompt"] for entry in recorded(log)] == ["first"]
    assert "Not trusted" not in trusted.stderr

    changed, _ = recorder(tmp_path, "context")
    _settings(project, {"UserPromptSubmit": _group(changed)})
    with scripted_openai_server([{"text": "two"}]) as server:
        again = run_cli(server, workspace, "-p", "second")
    assert len(recorded(log)) == 1
    assert "Not trusted, so skipped: hook UserPromptSubmit" in again.stderr


def test_each_event_of_a_headless_run_fires_once_with_its_json(
    workspace: Path, tmp_path: Path
) -> None:
    command, log = recorder(tmp_path)
    events = [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "SubagentStop",  # the sub-agent ends inside the `task` call
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ]
    tables = "".join(f'[[hooks.{event}]]\ncommand = """{command}"""\n' for event in events)
    (Path(os.environ["TUI_AGENT_HOME"]) / "config.toml").write_text(tables)
    task = {"name": "task", "arguments": {"description": "look", "prompt": "look around"}}
    steps = [{"tool_calls": [task]}, {"text": "Nothing here."}, {"text": "All done."}]
    with scripted_openai_server(steps) as server:
        done = run_cli(server, workspace, "-p", "delegate", timeout=60)

    assert done.returncode == 0, done.stderr
    got = recorded(log)
    assert [entry["hook_event_name"] for entry in got] == events
    assert all(entry["cwd"] == str(workspace) for entry in got)
    by_event = {entry["hook_event_name"]: entry for entry in got}
    assert by_event["PreToolUse"]["tool_name"] == "Task"
    assert by_event["PreToolUse"]["tool_input"]["prompt"] == "look around"
    assert by_event["SubagentStop"]["last_assistant_message"] == "Nothing here."
    assert by_event["Stop"]["last_assistant_message"] == "All done."
    assert by_event["SessionEnd"]["reason"] == "other"
