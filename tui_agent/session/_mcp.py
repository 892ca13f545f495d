"""MCP servers from the user's files, and which of them the user approved per workspace.

Two sources, merged: `[mcp_servers.NAME]` tables in `config.toml` (the user's own file, so
trusted) and the workspace's `.mcp.json` in Claude Code's format (anyone may have committed
it, so its servers start only once approved):

    {"mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
        "docs": {"type": "http", "url": "https://example.com/mcp",
                 "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}}

`${VAR}` (or `${VAR:-default}`) in any value comes from the environment, except that a
workspace's file may not name a key tui-agent holds (`keys.is_key`: the provider keys,
`api_key_env`, `secret_env`) nor a variable whose value is one: a repository must not be able to
send the user's model key to a server it names (`config.toml` may, being the user's own). What
is shown of a server (`command_line`, `describe`) is as written, never expanded. A mistake in
`config.toml` is a `ConfigError`; one in `.mcp.json` skips that server with a problem that
names the file, the server and the key (a workspace file should not stop the app). A name in
both files is the `config.toml` server. Approvals live in `$TUI_AGENT_HOME/mcp-approvals.json`,
per workspace, by a fingerprint of each server's name, command, args, env, URL and headers (any
change asks again).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from tui_agent import keys
from tui_agent.lazy_dataclass import dataclass
from tui_agent.session._config import (
    Config,
    ConfigError,
    McpOAuthTable,
    McpServerTable,
    toml_key,
)
from tui_agent.session._paths import AppPaths
from tui_agent.session._trust import TrustFile, fingerprint

if TYPE_CHECKING:  # loaded only when a server is configured: the one-shot path stays light
    from tui_agent.tools.mcp import McpOAuth, McpServerConfig

MCP_JSON = ".mcp.json"
APPROVALS_FILE = "mcp-approvals.json"

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class McpSetup:
    servers: tuple[McpServerConfig, ...] = ()
    problems: tuple[str, ...] = ()


class _Problem(Exception):
    def __init__(self, key: str, detail: str) -> None:
        super().__init__(detail)
        self.key = key
        self.detail = detail


def load_mcp_servers(
    config: Config,
    config_file: Path,
    workspace: Path,
    environ: Mapping[str, str] | None = None,
    *,
    given: Sequence[McpServerConfig] = (),
    workspace_file: bool = True,
) -> McpSetup:
    """`given` servers (a front end's) first, then config.toml's, then the workspace's."""
    # The environment with the keys `keys.protect` took out of it: `${GITHUB_TOKEN}` still works.
    env = keys.environ() if environ is None else environ
    servers: dict[str, McpServerConfig] = {server.name: server for server in given}
    for name, table in config.mcp_servers.items():
        if name in servers:
            continue
        try:
            servers[name] = _server(name, table, env, "config", workspace)
        except _Problem as problem:
            key = f"mcp_servers.{toml_key(name)}.{problem.key}"
            message = f"{config_file}: {key}: {problem.detail}"
            raise ConfigError(message, path=config_file, key=key) from None
    problems: list[str] = []
    for server in _workspace_servers(workspace, env, problems) if workspace_file else ():
        servers.setdefault(server.name, server)
    return McpSetup(tuple(servers.values()), tuple(problems))


def _workspace_servers(
    workspace: Path, env: Mapping[str, str], problems: list[str]
) -> list[McpServerConfig]:
    file = workspace / MCP_JSON
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        problems.append(f"{file}: cannot read it, so its MCP servers are skipped: {exc}")
        return []
    entries = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        problems.append(f'{file}: expected {{"mcpServers": {{NAME: {{...}}}}}}; nothing started')
        return []
    servers = []
    for name, entry in entries.items():
        try:
            try:
                table = McpServerTable.model_validate(_claude_keys(entry))
            except ValidationError as exc:
                error = exc.errors()[0]
                key = ".".join(str(part) for part in error["loc"]) or "(server)"
                raise _Problem(key, str(error["msg"])) from None
            servers.append(_server(name, table, env, "workspace", workspace))
        except _Problem as problem:
            problems.append(
                f"{file}: mcpServers.{name}.{problem.key}: {problem.detail} (server skipped)"
            )
    return servers


def client_server(
    name: str,
    workspace: Path,
    *,
    command: str = "",
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    url: str = "",
    headers: Mapping[str, str] | None = None,
    transport: Literal["http", "sse"] = "http",
) -> McpServerConfig:
    """A server a front end hands over (an ACP client's): stdio with `command`, else the URL
    over `transport` (streamable HTTP, or the legacy HTTP+SSE transport). An HTTP one uses the
    tokens a login to its URL stored (`tui-agent mcp login NAME --url URL`), and says when it
    needs one."""
    from tui_agent.tools.mcp import McpOAuth, McpServerConfig

    http = not command and transport == "http"
    return McpServerConfig(
        name=name,
        transport="stdio" if command else transport,
        command=command,
        args=tuple(args),
        env=dict(env or {}),
        url=url,
        headers=dict(headers or {}),
        source="client",
        cwd=str(workspace),
        oauth=McpOAuth(store=oauth_store()) if http else None,
    )


def _claude_keys(entry: Any) -> Any:
    """An entry's keys in Claude Code's format; other tools' keys are ignored."""
    if not isinstance(entry, dict):
        return entry
    kept = {key: value for key, value in entry.items() if key in _CLAUDE_KEYS}
    if isinstance(kept.get("oauth"), dict):
        kept["oauth"] = {_OAUTH_KEYS.get(key, key): value for key, value in kept["oauth"].items()}
    return kept


_CLAUDE_KEYS = frozenset(("type", "command", "args", "env", "url", "headers", "oauth"))
# Claude Code writes `oauth` keys in camel case; config.toml's are in snake case.
_OAUTH_KEYS = {
    "clientId": "client_id",
    "clientSecret": "client_secret",
    "callbackPort": "callback_port",
    "clientMetadataUrl": "client_metadata_url",
}
OAUTH_DIR = "mcp-auth"


def _server(
    name: str,
    table: McpServerTable,
    env: Mapping[str, str],
    source: Literal["config", "workspace"],
    workspace: Path,
) -> McpServerConfig:
    from tui_agent.tools.mcp import (
        DEFAULT_STARTUP_TIMEOUT_S,
        DEFAULT_TOOL_TIMEOUT_S,
        McpServerConfig,
    )

    transport = table.type or ("http" if table.url else "stdio")
    if transport == "stdio" and not table.command:
        raise _Problem("command", 'missing: a stdio server needs "command" (or give "url")')
    if transport != "stdio" and not table.url:
        raise _Problem("url", f'missing: an {transport} server needs "url"')
    expand = _Expander(env, source == "workspace")
    command, args = table.command or "", table.args
    return McpServerConfig(
        name=name,
        transport=transport,
        command=expand(command, "command"),
        args=tuple(expand(arg, f"args[{i}]") for i, arg in enumerate(args)),
        env={key: expand(value, f"env.{key}") for key, value in table.env.items()},
        url=expand(table.url or "", "url"),
        headers={k: expand(v, f"headers.{k}") for k, v in table.headers.items()},
        enabled=table.enabled,
        startup_timeout_s=table.startup_timeout_s or DEFAULT_STARTUP_TIMEOUT_S,
        tool_timeout_s=table.tool_timeout_s or DEFAULT_TOOL_TIMEOUT_S,
        source=source,
        cwd=str(workspace),
        as_written=(table.url or "") if transport != "stdio" else shlex.join([command, *args]),
        oauth=_oauth(table.oauth, expand, source) if transport == "http" else None,
    )


def oauth_store() -> str:
    """Where the MCP servers' OAuth tokens live: beside config.toml, one file per server URL."""
    return str(AppPaths.from_env().config_file.parent / OAUTH_DIR)


def _oauth(table: McpOAuthTable | None, expand: _Expander, source: str) -> McpOAuth:
    """Every HTTP server may need a login: without a table, discovery and registration do all."""
    from tui_agent.tools.mcp import McpOAuth

    store = oauth_store()
    if table is None:
        return McpOAuth(store=store)
    if source == "workspace" and table.private_key_file:
        # A repository must not make us sign assertions with a key of the user's choosing.
        raise _Problem(
            "oauth.private_key_file",
            f"a workspace's {MCP_JSON} may not name a key file to sign with (configure the "
            "server in config.toml's [mcp_servers] instead)",
        )
    given = {
        "client_id": table.client_id,
        "client_secret": table.client_secret,
        "private_key_file": table.private_key_file,
    }
    return McpOAuth(
        store=store,
        **{key: expand(value, f"oauth.{key}") if value else None for key, value in given.items()},
        scope=table.scope,
        callback_port=table.callback_port,
        client_metadata_url=table.client_metadata_url,
        grant=table.grant,
        signing_algorithm=table.signing_algorithm,
        issuer=table.issuer,
    )


class _Expander:
    """`${VAR}` in one server's values; `guarded` (a workspace's file): never a held key."""

    def __init__(self, env: Mapping[str, str], guarded: bool) -> None:
        self._env = env
        self._held = (
            {value for name, value in env.items() if value and keys.is_key(name)}
            if guarded
            else set()
        )
        self._guarded = guarded

    def __call__(self, value: str, key: str) -> str:
        return _VARIABLE.sub(lambda match: self._value(match, key), value)

    def _value(self, match: re.Match[str], key: str) -> str:
        variable, default = match.group(1), match.group(2)
        if self._guarded and (keys.is_key(variable) or self._env.get(variable) in self._held):
            raise _Problem(
                key,
                f"${{{variable}}} would give the server a key tui-agent holds, which a "
                f"workspace's {MCP_JSON} may not do (configure the server in config.toml's "
                "[mcp_servers] to give it one)",
            )
        if variable in self._env:
            return self._env[variable]
        if default is not None:
            return default
        raise _Problem(key, f"${{{variable}}} is not set in the environment")


class WorkspaceTrust:
    """The workspace servers a user approved, kept under `$TUI_AGENT_HOME` (`--yolo`: all)."""

    def __init__(self, workspace: Path, *, yolo: bool = False, file: Path | None = None) -> None:
        self._yolo = yolo
        self._trusted = TrustFile(file or AppPaths.from_env().data_dir / APPROVALS_FILE, workspace)

    def approved(self, servers: Sequence[McpServerConfig]) -> bool:
        if self._yolo:
            return True
        known = self._trusted.known()
        return all(_fingerprint(server) in known for server in servers)

    def remember(self, servers: Sequence[McpServerConfig]) -> None:
        self._trusted.add(map(_fingerprint, servers))


def _fingerprint(server: McpServerConfig) -> str:
    # Everything that decides what runs and what it is given: a changed env (PYTHONPATH into
    # the repository), header or OAuth client asks again. Values reach the file only inside a
    # one-way hash. An `oauth` table left at its defaults adds nothing, so approvals given
    # before OAuth existed still hold.
    from tui_agent.tools.mcp import McpOAuth

    oauth = server.oauth
    login = (
        ()
        if oauth is None or oauth == McpOAuth(store=oauth.store)
        else (json.dumps(sorted((k, v) for k, v in asdict(oauth).items() if k != "store")),)
    )
    return fingerprint(
        server.name,
        server.transport,
        server.command,
        json.dumps(server.args),
        json.dumps(sorted(server.env.items())),
        server.url,
        json.dumps(sorted(server.headers.items())),
        *login,
    )
