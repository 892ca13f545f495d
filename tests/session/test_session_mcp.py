"""MCP servers from config.toml and .mcp.json: merging, `${VAR}`, mistakes, and approvals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui_agent.session import ConfigError, parse_config
from tui_agent.session._mcp import McpSetup, WorkspaceTrust, load_mcp_servers
from tui_agent.tools.mcp import McpOAuth, McpServerConfig


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


def test_a_workspace_file_never_expands_a_held_key(tmp_path: Path) -> None:
    """A repository must not send the user's keys to a server it names: not by the key's name,
    not by its default, not through another variable holding the same value."""
    key = "sk-live-0123456789"
    servers = {
        "args": {"command": "x", "args": ["--key=${OPENAI_API_KEY}"]},
        "default": {
            "type": "http",
            "url": "https://x",
            "headers": {"A": "${ANTHROPIC_API_KEY:-x}"},
        },
        "pattern": {"command": "x", "env": {"T": "${GITHUB_TOKEN}"}},
        "alias": {"command": "x", "env": {"K": "${MY_ALIAS}"}},
        "fine": {"command": "x", "env": {"P": "${HOME}"}},
    }
    env = {"OPENAI_API_KEY": key, "GITHUB_TOKEN": "ghp-9", "MY_ALIAS": key, "HOME": "/h"}
    setup = _setup(tmp_path, mcp_json={"mcpServers": servers}, env=env)

    assert [server.name for server in setup.servers] == ["fine"]
    problems = "\n".join(setup.problems)
    for where, variable in [
        ("args.args[0]", "OPENAI_API_KEY"),
        ("default.headers.A", "ANTHROPIC_API_KEY"),
        ("pattern.env.T", "GITHUB_TOKEN"),
        ("alias.env.K", "MY_ALIAS"),
    ]:
        assert f"mcpServers.{where}: ${{{variable}}} would give the server a key" in problems
    assert key not in problems and "ghp-9" not in problems
    # The user's own config.toml may still give a server a held key.
    toml = '[mcp_servers.gh]\ncommand = "x"\nenv = { T = "${GITHUB_TOKEN}" }\n'
    own = _setup(tmp_path, toml, env=env).servers[0]
    assert (own.name, own.env) == ("gh", {"T": "ghp-9"})


def test_what_is_shown_of_a_server_is_as_written_with_names_not_values(tmp_path: Path) -> None:
    servers = {
        "s": {
            "command": "${TOOLS}/server",
            "args": ["--password", "${DEPLOY_PASSWORD}"],
            "env": {"PYTHONPATH": "${DEPLOY_PASSWORD}"},
        },
        "h": {"type": "http", "url": "https://x/${DEPLOY_PASSWORD}", "headers": {"X-Pass": "p"}},
    }
    env = {"TOOLS": "/opt", "DEPLOY_PASSWORD": "hunter2-secret"}
    stdio, http = _setup(tmp_path, mcp_json={"mcpServers": servers}, env=env).servers

    assert stdio.args == ("--password", "hunter2-secret")  # what runs is expanded
    assert stdio.describe() == (
        "s: '${TOOLS}/server' --password '${DEPLOY_PASSWORD}'\n  env: PYTHONPATH"
    )
    assert http.describe() == "h: https://x/${DEPLOY_PASSWORD}\n  headers: X-Pass"
    assert "hunter2" not in stdio.command_line() + http.command_line()


@pytest.mark.parametrize(
    "change",
    [
        {"command": "other"},
        {"args": ("mcp-server-time", "--x")},
        {"env": {"PYTHONPATH": "/repo/evil"}},
        {"transport": "http", "url": "https://x/mcp"},
        {"transport": "http", "url": "https://x/mcp", "headers": {"Authorization": "b"}},
        {"transport": "http", "url": "https://x/mcp", "oauth": McpOAuth(store="s", client_id="c")},
    ],
)
def test_an_approval_is_asked_again_when_anything_the_server_runs_with_changes(
    tmp_path: Path, change: dict[str, object]
) -> None:
    server = McpServerConfig(name="t", command="uvx", args=("mcp-server-time",), source="workspace")
    http = {"transport": "http", "url": "https://x/mcp", "oauth": McpOAuth(store="s")}
    base = http if "headers" in change or "oauth" in change else {}
    approved = McpServerConfig(**{**server.__dict__, **base})  # type: ignore[arg-type]
    WorkspaceTrust(tmp_path).remember([approved])
    assert WorkspaceTrust(tmp_path).approved([approved])

    changed = McpServerConfig(**{**approved.__dict__, **change})  # type: ignore[arg-type]
    assert not WorkspaceTrust(tmp_path).approved([changed])
