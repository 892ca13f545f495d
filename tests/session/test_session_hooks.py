"""Hook commands from the person's and the project's files; a project's hooks wait for trust,
and the start-up prompt lists everything a repository brings, in one list."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tui_agent.session import LoopConfig, load_config
from tui_agent.session._config import ConfigError
from tui_agent.session._hooks import HookTrust, load_hooks
from tui_agent.session._repository import pending, read_setup, repository_prompt, trust_all


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def settings_json(path: Path, hooks: dict[str, Any], **more: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks, **more}))


def claude_hook(command: str, matcher: str = "", **fields: Any) -> list[dict[str, Any]]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command, **fields}]}]


def _config(tmp_path: Path, text: str) -> Path:
    file = tmp_path / "config.toml"
    file.write_text(text)
    return file


def test_hooks_come_from_config_toml_and_claude_codes_files(
    tmp_path: Path, workspace: Path
) -> None:
    config_file = _config(
        tmp_path,
        '[[hooks.PreToolUse]]\nmatcher = "Bash|edit_file"\ncommand = "check"\ntimeout = 5\n',
    )
    user = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json"
    settings_json(user, {"Stop": claude_hook("notify-me")})
    settings_json(
        workspace / ".claude" / "settings.json",
        {"PostToolUse": claude_hook("fmt", "Edit|Write", timeout=9)},
    )
    trust = HookTrust(workspace, file=tmp_path / "trust.json")
    setup = load_hooks(load_config(config_file), config_file, workspace, trust)

    shown = [(h.event, h.matcher, h.command, h.timeout_s, h.source, h.runs) for h in setup.specs]
    assert shown == [
        ("PreToolUse", "Bash|edit_file", "check", 5.0, "config.toml", True),
        ("Stop", "", "notify-me", 60.0, "~/.claude/settings.json", True),
        ("PostToolUse", "Edit|Write", "fmt", 9.0, ".claude/settings.json", False),
    ]
    assert setup.problems == ()


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ('[[hooks.BeforeLunch]]\ncommand = "x"\n', "hooks.BeforeLunch[0]"),
        ('[[hooks.PreToolUse]]\nmatcher = "Bash("\ncommand = "x"\n', "hooks.PreToolUse[0]"),
        ("[[hooks.PreToolUse]]\nmatcher = 'Bash'\n", "hooks.PreToolUse.0.command"),
    ],
)
def test_a_mistake_in_config_toml_names_the_hook(
    tmp_path: Path, workspace: Path, toml: str, key: str
) -> None:
    config_file = _config(tmp_path, toml)
    with pytest.raises(ConfigError) as raised:
        load_hooks(load_config(config_file), config_file, workspace, HookTrust(workspace))
    assert raised.value.key == key


def test_a_bad_hook_in_a_project_file_is_skipped_with_a_problem(
    tmp_path: Path, workspace: Path
) -> None:
    settings_json(
        workspace / ".tui-agent" / "settings.json",
        {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "http", "url": "https://x"}]},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "ok"}]},
            ]
        },
    )
    config_file = tmp_path / "none.toml"
    setup = load_hooks(load_config(config_file), config_file, workspace, HookTrust(workspace))

    assert [spec.command for spec in setup.specs] == ["ok"]
    [problem] = setup.problems
    assert ".tui-agent/settings.json" in problem and "not supported" in problem


def test_a_trusted_project_hook_runs_until_it_changes(tmp_path: Path, workspace: Path) -> None:
    project = workspace / ".claude" / "settings.json"
    settings_json(project, {"PreToolUse": claude_hook("guard.sh", "Bash")})
    config = LoopConfig(workspace=workspace)

    setup = read_setup(config)
    assert [line.name for line in pending(setup.items())] == ["PreToolUse (Bash)"]
    trust_all(setup.items())
    assert pending(read_setup(config).items()) == []
    assert all(spec.runs for spec in read_setup(config).hooks.specs)

    settings_json(project, {"PreToolUse": claude_hook("guard.sh --strict", "Bash")})
    assert [line.detail for line in pending(read_setup(config).items())] == [
        "guard.sh --strict   [.claude/settings.json]"
    ]


def test_the_prompt_lists_servers_hooks_and_allow_rules_and_yolo_trusts_all(
    workspace: Path,
) -> None:
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"docs": {"command": "docs-server", "args": ["--stdio"]}}})
    )
    settings_json(
        workspace / ".claude" / "settings.json",
        {"SessionStart": claude_hook("load-context")},
        permissions={"allow": ["Bash(make:*)"], "deny": ["Bash(rm:*)"]},
    )
    skill = workspace / ".claude" / "skills" / "deploy" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: deploy\ndescription: ship it\n---\nRun make deploy.\n")
    command = workspace / ".tui-agent" / "commands" / "today.md"
    command.parent.mkdir(parents=True)
    command.write_text("Today is !`date +%Y`.\n")
    asked = repository_prompt(LoopConfig(workspace=workspace))
    assert asked is not None
    lines, trust = asked

    assert [(line.kind, line.name) for line in lines] == [
        ("server", "docs"),
        ("hook", "SessionStart"),
        ("allow rule", "Bash(make:*)"),
        ("skill", "deploy"),
        ("command", "/today"),
    ]
    assert pending(read_setup(LoopConfig(workspace=workspace, yolo=True)).items()) == []
    trust()
    again = repository_prompt(LoopConfig(workspace=workspace))
    assert again is not None and again[0] == []
