"""MCP servers from config.toml and .mcp.json: merging, `${VAR}`, mistakes, and approvals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui_agent.session import ConfigError, parse_config
from tui_agent.session._mcp import McpSetup, WorkspaceTrust, load_mcp_servers
from tui_agent.tools.mcp import McpServerConfig


def _setup(
    tmp_path: Path, toml: str = "", mcp_json: object = None, env: dict[str, str] | None = None
) -> McpSetup:
    config_file = tmp_path / "config.toml"
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    if mcp_json is not None:
        text = mcp_json if isinstance(mcp_json, str) else json.dumps(mcp_json)
        (workspace / ".mcp.json").write_text(text)
    return load_mcp_servers(parse_config(toml, config_file), config_file, workspace, env or {})


def test_both_sources_merge_and_config_toml_wins_a_name(tmp_path: Path) -> None:
    setup = _setup(
        tmp_path,
        '[mcp_servers.git]\ncommand = "uvx"\nargs = ["mcp-server-git"]\ntool_timeout_s = 5\n',
        {
            "mcpServers": {
                "git": {"command": "evil"},
                "docs": {"type": "http", "url": "https://x/mcp", "headers": {"A": "b"}},
            }
        },
    )

    by_name = {server.name: server for server in setup.servers}
    git, docs = by_name["git"], by_name["docs"]
    assert (git.command, git.args, git.source, git.tool_timeout_s) == (
        "uvx",
        ("mcp-server-git",),
        "config",
        5,
    )
    assert (docs.transport, docs.url, docs.headers, docs.source) == (
        "http",
        "https://x/mcp",
        {"A": "b"},
        "workspace",
    )
    assert not docs.trusted and git.trusted
    assert git.cwd == str(tmp_path / "ws")


def test_variables_expand_from_the_environment_with_defaults(tmp_path: Path) -> None:
    setup = _setup(
        tmp_path,
        mcp_json={
            "mcpServers": {
                "s": {
                    "command": "${TOOLS}/server",
                    "args": ["--level=${LEVEL:-info}"],
                    "env": {"TOKEN": "${TOKEN}"},
                }
            }
        },
        env={"TOOLS": "/opt/bin", "TOKEN": "t0k"},
    )

    [server] = setup.servers
    assert server.command == "/opt/bin/server"
    assert server.args == ("--level=info",)
    assert server.env == {"TOKEN": "t0k"}


def test_a_mistake_in_mcp_json_skips_that_server_and_names_file_server_and_key(
    tmp_path: Path,
) -> None:
    setup = _setup(
        tmp_path,
        mcp_json={
            "mcpServers": {
                "ok": {"command": "a"},
                "typo": {"args": ["x"]},
                "bad": {"command": "b", "args": "not-a-list"},
                "unset": {"command": "${NOPE}"},
            }
        },
    )

    assert [server.name for server in setup.servers] == ["ok"]
    file = tmp_path / "ws" / ".mcp.json"
    assert setup.problems[0] == (
        f'{file}: mcpServers.typo.command: missing: a stdio server needs "command" '
        '(or give "url") (server skipped)'
    )
    assert setup.problems[1].startswith(f"{file}: mcpServers.bad.args: ")
    assert setup.problems[2].startswith(f"{file}: mcpServers.unset.command: ${{NOPE}} is not set")


def test_an_unreadable_mcp_json_is_a_problem_not_a_failure(tmp_path: Path) -> None:
    setup = _setup(tmp_path, mcp_json="{not json")

    assert setup.servers == ()
    assert "cannot read it" in setup.problems[0]


def test_a_mistake_in_config_toml_is_a_config_error_naming_file_server_and_key(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError) as caught:
        _setup(tmp_path, '[mcp_servers.docs]\nargs = ["--port", "1"]\n')

    assert str(caught.value) == (
        f"{tmp_path / 'config.toml'}: mcp_servers.docs.command: missing: a stdio server needs "
        '"command" (or give "url")'
    )


def test_an_unknown_key_in_config_toml_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config('[mcp_servers.git]\ncommand = "x"\ncomand = "y"\n', tmp_path / "c.toml")

    assert "mcp_servers.git.comand: unknown key" in str(caught.value)


def test_approvals_are_remembered_per_workspace_and_command(tmp_path: Path) -> None:
    server = McpServerConfig(name="t", command="uvx", args=("mcp-server-time",), source="workspace")
    changed = McpServerConfig(name="t", command="uvx", args=("other",), source="workspace")
    here = WorkspaceTrust(tmp_path / "a")

    assert not here.approved([server])
    here.remember([server])

    assert WorkspaceTrust(tmp_path / "a").approved([server])
    assert not WorkspaceTrust(tmp_path / "a").approved([changed])
    assert not WorkspaceTrust(tmp_path / "b").approved([server])
    assert WorkspaceTrust(tmp_path / "b", yolo=True).approved([server])


def test_approvals_never_store_environment_values(tmp_path: Path, tui_home: Path) -> None:
    server = McpServerConfig(name="t", command="x", env={"TOKEN": "secret-123"}, source="workspace")
    WorkspaceTrust(tmp_path).remember([server])

    stored = (tui_home / "mcp-approvals.json").read_text()
    assert "secret-123" not in stored


@pytest.fixture
def tui_home(_isolated_home: Path) -> Path:
    return _isolated_home


def test_a_key_held_away_from_tools_can_still_be_given_to_a_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui_agent import keys

    monkeypatch.setenv("GITHUB_TOKEN", "ghp-held")
    keys.configure(keys.DEFAULT_SECRET_PATTERNS)  # what start-up does: out of os.environ
    config_file = tmp_path / "config.toml"
    toml = '[mcp_servers.gh]\ncommand = "gh-mcp"\nenv = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }\n'
    setup = load_mcp_servers(parse_config(toml, config_file), config_file, tmp_path)
    assert setup.problems == ()
    [server] = setup.servers
    assert dict(server.env) == {"GITHUB_TOKEN": "ghp-held"}
