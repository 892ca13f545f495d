"""Permission rules from files: config.toml, Claude Code's user file, the project's four files;
trust per rule; "always" written where the person chose, and a rule taken out of its file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tui_agent.session import load_config
from tui_agent.session._config import ConfigError
from tui_agent.session._permissions import RuleFiles, RuleTrust, load_permissions


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".claude").mkdir(parents=True)
    (root / ".tui-agent").mkdir()
    return root


def write_json(path: Path, permissions: dict[str, list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": permissions}))


def test_rules_come_from_every_file_with_their_source(workspace: Path, tmp_path: Path) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text('[permissions]\nallow = ["Bash(npm test:*)"]\ndeny = ["Read(.env)"]\n')
    write_json(
        Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json", {"ask": ["Bash(git push:*)"]}
    )
    write_json(workspace / ".claude" / "settings.json", {"allow": ["Bash(make:*)"]})
    write_json(workspace / ".tui-agent" / "settings.local.json", {"deny": ["Bash(curl:*)"]})
    trust = RuleTrust(workspace, file=tmp_path / "trust.json")
    setup = load_permissions(load_config(config_file), config_file, workspace, trust)
    shown = [(r.effect, r.text, r.source, r.counts) for r in setup.rules]
    assert shown == [
        ("allow", "Bash(npm test:*)", "config.toml", True),
        ("deny", "Read(.env)", "config.toml", True),
        ("ask", "Bash(git push:*)", "~/.claude/settings.json", True),
        ("deny", "Bash(curl:*)", ".tui-agent/settings.local.json", True),
        ("allow", "Bash(make:*)", ".claude/settings.json", False),  # not trusted yet
    ]
    trust.remember([r for r in setup.rules if not r.counts])
    again = load_permissions(load_config(config_file), config_file, workspace, trust)
    assert all(rule.counts for rule in again.rules)
    # A rule added to the project later is not trusted with the others.
    write_json(workspace / ".claude" / "settings.json", {"allow": ["Bash(make:*)", "Bash(sh:*)"]})
    changed = load_permissions(load_config(config_file), config_file, workspace, trust)
    assert [r.text for r in changed.rules if not r.counts] == ["Bash(sh:*)"]


def test_a_bad_rule_in_config_toml_names_the_key(workspace: Path, tmp_path: Path) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text('[permissions]\nallow = ["ok", "not a rule!"]\n')
    with pytest.raises(ConfigError, match=r"permissions\.allow\[1\]"):
        load_permissions(load_config(config_file), config_file, workspace, RuleTrust(workspace))


def test_a_bad_project_file_is_skipped_with_a_problem(workspace: Path, tmp_path: Path) -> None:
    (workspace / ".claude" / "settings.json").write_text("{not json")
    config_file = tmp_path / "config.toml"
    setup = load_permissions(load_config(config_file), config_file, workspace, RuleTrust(workspace))
    assert setup.rules == () and "settings.json: cannot read it" in setup.problems[0]


def test_always_writes_the_rule_where_chosen_and_remove_takes_it_out(
    workspace: Path, tmp_path: Path
) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text('# my settings\napproval_mode = "ask"  # keep asking\n')
    trust = RuleTrust(workspace, file=tmp_path / "trust.json")
    files = RuleFiles(workspace, config_file, trust)
    files.keep("user", ("shell(make:*)",))
    files.keep("project", ("shell(npm run:*)",))
    text = config_file.read_text()
    assert "# my settings" in text and "# keep asking" in text  # comments kept
    assert load_config(config_file).permissions.allow == ["shell(make:*)"]
    local = json.loads((workspace / ".tui-agent" / "settings.local.json").read_text())
    assert local == {"permissions": {"allow": ["shell(npm run:*)"]}}
    setup = load_permissions(load_config(config_file), config_file, workspace, trust)
    assert all(rule.counts for rule in setup.rules)  # the person chose the project rule here
    for rule in setup.rules:
        assert files.forget(rule) is None
    assert load_config(config_file).permissions.allow == []
    assert json.loads((workspace / ".tui-agent" / "settings.local.json").read_text()) == {
        "permissions": {"allow": []}
    }
