"""Everything a repository brings that acts only once the person trusts it, in one list.

`repository_items` is the one place the kinds are listed: the workspace's `.mcp.json` servers,
its hooks and its allow rules, each a `RepositoryItems` source (`session._trust`). Another kind
is one more line in that list. The app shows every pending item in one prompt at start-up and,
if the person agrees, `trust_all` remembers them; a headless run never asks, so what is pending
is skipped and `skipped_notice` says what and how to trust it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.lazy_dataclass import dataclass
from tui_agent.session._commands import CommandTrust
from tui_agent.session._config import Config, ConfigError, load_config
from tui_agent.session._hooks import HookItems, HookSetup, HookTrust, load_hooks
from tui_agent.session._launch import LoopConfig
from tui_agent.session._mcp import McpSetup, WorkspaceTrust, load_mcp_servers
from tui_agent.session._paths import AppPaths
from tui_agent.session._permissions import (
    PermissionSetup,
    RuleTrust,
    load_permissions,
)
from tui_agent.session._skills import SkillTrust
from tui_agent.session._trust import RepositoryItems, TrustLine
from tui_agent.tools import Rule

if TYPE_CHECKING:
    from tui_agent.tools.mcp import McpServerConfig


@dataclass(frozen=True)
class WorkspaceSetup:
    """What the person's and the workspace's files configure, as a loop is opened with it."""

    config: LoopConfig
    config_file: Path
    settings: Config
    mcp: McpSetup
    permissions: PermissionSetup
    rule_trust: RuleTrust
    hooks: HookSetup

    def items(self) -> list[RepositoryItems]:
        return repository_items(self)


def read_setup(config: LoopConfig) -> WorkspaceSetup:
    """Read `config.toml` and the workspace's files (`ConfigError` for a mistake in the
    person's own file; a workspace file's mistakes are problems to show)."""
    config_file = AppPaths.from_env().config_file
    settings = load_config(config_file)
    mcp = load_mcp_servers(
        settings,
        config_file,
        config.workspace,
        given=config.mcp_servers,
        workspace_file=config.workspace_mcp,
    )
    rule_trust = RuleTrust(config.workspace, trust_all=config.yolo)
    permissions = load_permissions(settings, config_file, config.workspace, rule_trust)
    hook_trust = HookTrust(config.workspace, trust_all=config.yolo)
    hooks = load_hooks(settings, config_file, config.workspace, hook_trust)
    return WorkspaceSetup(config, config_file, settings, mcp, permissions, rule_trust, hooks)


def repository_items(setup: WorkspaceSetup) -> list[RepositoryItems]:
    workspace, yolo = setup.config.workspace, setup.config.yolo
    return [
        McpItems(setup.mcp.servers, WorkspaceTrust(workspace, yolo=yolo)),
        HookItems(setup.hooks.specs, HookTrust(workspace, trust_all=yolo)),
        RuleItems(setup.permissions.rules, setup.rule_trust),
        SkillTrust(workspace, trust_all=yolo),
        CommandTrust(workspace, trust_all=yolo),
    ]


def repository_prompt(config: LoopConfig) -> tuple[list[TrustLine], Callable[[], None]] | None:
    """What the start-up prompt lists, and what trusts it all; None when the person's own
    configuration is broken (opening the loop then says so)."""
    try:
        items = read_setup(config).items()
    except ConfigError:
        return None
    return pending(items), lambda: trust_all(items)


def pending(items: Sequence[RepositoryItems]) -> list[TrustLine]:
    return [line for source in items for line in source.pending()]


def trust_all(items: Sequence[RepositoryItems]) -> None:
    for source in items:
        source.trust()


def skipped_notice(lines: Sequence[TrustLine], *, headless: bool) -> str:
    """What was not started or run because nobody trusted it, and how to trust it."""
    listed = "; ".join(f"{line.kind} {line.name} ({line.detail.splitlines()[0]})" for line in lines)
    how = (
        "Open tui-agent in this workspace to trust them, or run with --yolo."
        if headless
        else "Restart tui-agent here to be asked again."
    )
    return f"Not trusted, so skipped: {listed}. {how}"


class McpItems:
    """The workspace's `.mcp.json` servers not approved yet."""

    def __init__(self, servers: Sequence[McpServerConfig], trust: WorkspaceTrust) -> None:
        self._pending = [
            server
            for server in servers
            if not server.trusted and server.enabled and not trust.approved([server])
        ]
        self._trust = trust

    def pending(self) -> list[TrustLine]:
        # `describe` begins with the name, which the prompt shows already.
        return [
            TrustLine("server", s.name, s.describe().removeprefix(f"{s.name}: "))
            for s in self._pending
        ]

    def trust(self) -> None:
        self._trust.remember(self._pending)


class RuleItems:
    """The project's allow rules not trusted yet (its deny and ask rules always apply)."""

    def __init__(self, rules: Sequence[Rule], trust: RuleTrust) -> None:
        self._pending = [rule for rule in rules if not rule.counts]
        self._trust = trust

    def pending(self) -> list[TrustLine]:
        return [TrustLine("allow rule", r.text, f"[{r.source}]") for r in self._pending]

    def trust(self) -> None:
        self._trust.remember(self._pending)
