"""What it takes to reach one MCP server: a command to run (stdio) or a URL (streamable HTTP).

Plain data, built by whoever reads the user's files (`session`) or by an ACP client's session
request; nothing here imports the MCP SDK.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Literal

Transport = Literal["stdio", "http"]
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

    @property
    def trusted(self) -> bool:
        return self.source != "workspace"

    def command_line(self) -> str:
        """What the user approves: the command as a shell would show it, or the URL."""
        if self.transport == "http":
            return self.url
        return shlex.join([self.command, *self.args])
