"""What the command line asks for when it opens a loop: kept light (no loop stack imported),
so the full-screen app can draw its first frame before the loop is built."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from tui_agent.lazy_dataclass import dataclass

if TYPE_CHECKING:
    from tui_agent.tools import EditorFiles, EditorTerminal
    from tui_agent.tools.mcp import McpServerConfig
    from tui_agent.vocab import ApprovalMode


class LoopSetupError(Exception):
    """Configuration or session problems a user must fix (exit status 2)."""


@dataclass(frozen=True)
class LoopConfig:
    workspace: Path
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    script: str | None = None
    max_steps: int | None = None
    max_budget_usd: float | None = None  # None: config.toml's max_budget_usd
    yolo: bool = False
    resume: str | None = None
    continue_latest: bool = False
    fork: bool = False  # with resume/continue_latest: continue a copy as a new session
    interactive: bool = True  # False: headless, approvals that would ask are denied
    approval_mode: ApprovalMode | None = None
    sandbox: Literal["workspace-write", "read-only", "off"] | None = None  # None: config.toml's
    # MCP servers a front end hands over (an ACP client's), trusted; and whether the
    # workspace's .mcp.json counts (an ACP client decides the servers itself).
    mcp_servers: tuple[McpServerConfig, ...] = ()
    workspace_mcp: bool = True
    editor_files: EditorFiles | None = None  # a front end's files (ACP): read and written there
    editor_terminal: EditorTerminal | None = None  # an editor's terminals (ACP), for commands
    # The front end put the start-up trust prompt (the app): what the person did not trust
    # then is skipped, never asked about again while the loop runs.
    trust_asked: bool = False
