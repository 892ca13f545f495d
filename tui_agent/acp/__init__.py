"""`tui-agent acp`: the agent loop behind the Agent Client Protocol over stdio.

Editors (Zed, JetBrains) and front ends (Toad) start `tui-agent acp` and speak JSON-RPC on its
stdin and stdout; stdout carries nothing else (diagnostics go to stderr). Built on the
`agent-client-protocol` package (protocol version 1). Imports only the loop's public API,
`session` and the vocabulary; never Textual.
"""

from tui_agent.acp._agent import AcpAgent, AcpDefaults
from tui_agent.acp._main import main

__all__ = ["AcpAgent", "AcpDefaults", "main"]
