"""Modes and permission rules headless: plan mode prints the plan and exits 0, a denied call
names the rule to add and where, deny rules hold under --yolo, a project's allow rules count
only once trusted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

PLAN = "# Plan\n\n1. Change alpha to beta in a.txt\n2. Run the tests"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    return root


def run(
    workspace: Path, steps: list[dict[str, Any]], *args: str
) -> subprocess.CompletedProcess[str]:
    script = workspace.parent / "script.json"
    script.write_text(json.dumps({"steps": steps}))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tui_agent",
            "--provider",
            "scripted",
            "--script",
            str(script),
            "--workspace",
            str(workspace),
            "-p",
            "go",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
    )


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}], "chunk_delay_s": 0}


def say(words: str) -> dict[str, Any]:
    return {"text": words, "chunk_delay_s": 0}


def tool_outputs(stdout: str) -> list[str]:
    events = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return [e["output"] for e in events if e["type"] == "tool.finished"]


def test_headless_plan_mode_prints_the_plan_and_exits_0(workspace: Path) -> None:
    edit = call("edit_file", path="a.txt", old_string="alpha", new_string="beta")
    done = run(
        workspace,
        [edit, call("exit_plan_mode", plan=PLAN), say("Plan ready.")],
        "--approval-mode",
        "plan",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(PLAN + "\n")
    assert done.stdout.rstrip().endswith("Plan ready.")
    assert (workspace / "a.txt").read_text() == "alpha\n"


def test_a_denied_call_names_the_rule_to_add_and_where(workspace: Path) -> None:
    done = run(
        workspace, [call("shell", command="make test -j2"), say("ok")], "--output-format", "jsonl"
    )
    [output] = tool_outputs(done.stdout)
    assert '"shell(make test:*)"' in output
    assert "[permissions] allow in " in output and "config.toml" in output
    assert ".tui-agent/settings.local.json" in output


def test_a_config_rule_lets_the_call_run_headless(workspace: Path) -> None:
    home = Path(os.environ["TUI_AGENT_HOME"])
    (home / "config.toml").write_text('[permissions]\nallow = ["Bash(echo:*)"]\n')
    done = run(
        workspace,
        [call("shell", command="echo hi && echo there"), say("ok")],
        "--output-format",
        "jsonl",
    )
    [output] = tool_outputs(done.stdout)
    assert "hi\nthere" in output


def test_deny_holds_under_yolo(workspace: Path) -> None:
    home = Path(os.environ["TUI_AGENT_HOME"])
    (home / "config.toml").write_text('[permissions]\ndeny = ["Edit(*.txt)"]\n')
    edit = call("edit_file", path="a.txt", old_string="alpha", new_string="beta")
    done = run(workspace, [edit, say("ok")], "--yolo", "--output-format", "jsonl")
    [output] = tool_outputs(done.stdout)
    assert 'denied by the rule "Edit(*.txt)" (config.toml)' in output
    assert (workspace / "a.txt").read_text() == "alpha\n"


def test_project_allow_rules_count_only_once_trusted(workspace: Path) -> None:
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(echo:*)"], "deny": ["Bash(rm:*)"]}})
    )
    steps = [call("shell", command="echo ran-it"), call("shell", command="rm a.txt"), say("ok")]
    before = run(workspace, steps, "--output-format", "jsonl")
    untrusted, denied = tool_outputs(before.stdout)
    assert "was not run" in untrusted and "has not trusted" in untrusted
    assert 'denied by the rule "Bash(rm:*)"' in denied  # project deny rules always apply
    trust = Path(os.environ["TUI_AGENT_HOME"]) / "permission-trust.json"
    # An earlier "yes, remember" in the app: the rules' fingerprints under this workspace.
    from tui_agent.session._permissions import RuleTrust
    from tui_agent.tools import parse_rule

    rule = parse_rule("Bash(echo:*)", source=".claude/settings.json", project=True)
    RuleTrust(workspace.resolve(), file=trust).remember([rule])
    after = run(workspace, steps, "--output-format", "jsonl")
    ran, still_denied = tool_outputs(after.stdout)
    assert ran.startswith("ran-it")
    assert "denied" in still_denied and (workspace / "a.txt").exists()


def test_the_command_line_offers_exactly_the_modes_there_are() -> None:
    from tui_agent.cli import _parser
    from tui_agent.vocab import APPROVAL_MODES

    action = next(a for a in _parser()._actions if a.dest == "approval_mode")
    assert tuple(action.choices or ()) == APPROVAL_MODES
