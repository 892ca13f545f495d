"""What it takes to reach one MCP server: a command to run (stdio) or a URL (streamable HTTP, or
the legacy HTTP+SSE transport).

Plain data, built by whoever reads the user's files (`session`) or by an ACP client's session
request; nothing here imports the MCP SDK.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Literal

Transport = Literal["stdio", "http", "sse"]  # sse: the legacy HTTP+SSE transport
Source = Literal["config", "workspace", "client"]

DEFAULT_STARTUP_TIMEOUT_S = 30.0
DEFAULT_TOOL_TIMEOUT_S = 60.0


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
