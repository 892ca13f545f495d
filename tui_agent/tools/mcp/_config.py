"""What it takes to reach one MCP server: a command to run (stdio) or a URL (streamable HTTP, or
the legacy HTTP+SSE transport).

Plain data, built by whoever reads the user's files (`session`) or by an ACP client's session
request; nothing here imports the MCP SDK.
"""

from __future__ import annotations

import shlex
from dataclasses import field
from typing import Literal

from tui_agent.lazy_dataclass import dataclass

Transport = Literal["stdio", "http", "sse"]  # sse: the legacy HTTP+SSE transport
Source = Literal["config", "workspace", "client"]

DEFAULT_STARTUP_TIMEOUT_S = 30.0
DEFAULT_TOOL_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class McpOAuth:
    """How an HTTP server's OAuth login is done and where its tokens are kept.

    `store` is the folder of token files (one per server URL, mode 0600). A pre-registered
    client gives `client_id` (and `client_secret`); without one the client registers itself
    (dynamic registration) or, where the server supports it, names itself by
    `client_metadata_url`. `scope` replaces what discovery would choose; `callback_port` fixes
    the loopback port for servers that registered one exact redirect URI. `grant =
    "client_credentials"` is a machine identity instead of a person's login: the client id with
    its secret, or with a private key (`private_key_file`, PEM) that signs a JWT assertion.
    """

    store: str
    client_id: str | None = None
    client_secret: str | None = None
    scope: str | None = None
    callback_port: int | None = None
    client_metadata_url: str | None = None
    grant: Literal["authorization_code", "client_credentials"] = "authorization_code"
    private_key_file: str | None = None
    signing_algorithm: str = "RS256"
    issuer: str | None = None  # client credentials: the only authorization server to trust


@dataclass(frozen=True)
class McpServerConfig:
    name: str
    transport: Transport = "stdio"
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    enabled: bool = True
    startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S
    tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S
    # "workspace" servers come from a file anyone could have committed: they need approval.
    source: Source = "config"
    cwd: str | None = None
    # The command line (or URL) as its file writes it, `${VAR}` unexpanded: what is shown, so a
    # value from the environment (a token) is never printed. Empty: shown as run.
    as_written: str = ""
    # HTTP servers: their OAuth settings (None: no OAuth, e.g. an ACP client's server).
    oauth: McpOAuth | None = None

    @property
    def trusted(self) -> bool:
        return self.source != "workspace"

    def command_line(self) -> str:
        """The command as a shell would show it, or the URL, as the file writes it."""
        if self.as_written:
            return self.as_written
        if self.transport != "stdio":
            return self.url
        return shlex.join([self.command, *self.args])

    def describe(self) -> str:
        """What the user approves: the name, the command line, and the names (never the values)
        of the environment variables and headers the server is given."""
        lines = [f"{self.name}: {self.command_line()}"]
        if self.env:
            lines.append(f"  env: {', '.join(sorted(self.env))}")
        if self.headers:
            lines.append(f"  headers: {', '.join(sorted(self.headers))}")
        return "\n".join(lines)
