"""The Model Context Protocol client: servers' tools offered to the model as our own.

`McpServerConfig` says how to reach a server; `McpServers` connects a list of them for one
loop (start-up, trust, tools, faults, reconnect); each server tool becomes an `McpTool` named
`mcp__<server>__<tool>`. The MCP SDK is imported only when a server connects.
"""

from tui_agent.tools.mcp._config import (
    DEFAULT_STARTUP_TIMEOUT_S,
    DEFAULT_TOOL_TIMEOUT_S,
    McpOAuth,
    McpServerConfig,
)
from tui_agent.tools.mcp._names import tool_name
from tui_agent.tools.mcp._servers import (
    AskTrust,
    McpRequestError,
    McpServers,
    McpServerStatus,
    ServerState,
    TrustAnswer,
    TrustStore,
)
from tui_agent.tools.mcp._tool import McpTool

__all__ = [
    "DEFAULT_STARTUP_TIMEOUT_S",
    "DEFAULT_TOOL_TIMEOUT_S",
    "AskTrust",
    "McpOAuth",
    "McpRequestError",
    "McpServerConfig",
    "McpServerStatus",
    "McpServers",
    "McpTool",
    "ServerState",
    "TrustAnswer",
    "TrustStore",
    "tool_name",
]
