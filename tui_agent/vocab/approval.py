"""Approval modes and where a remembered permission rule is kept: the one definition every
layer (tools, loop, session, UI, ACP) uses."""

from __future__ import annotations

from typing import Literal, get_args

# plan: read-only, the model presents a plan; ask: every edit and command asks;
# auto-edit: workspace edits and sandboxed commands run; yolo: nothing asks.
ApprovalMode = Literal["plan", "ask", "auto-edit", "yolo"]
APPROVAL_MODES: tuple[ApprovalMode, ...] = get_args(ApprovalMode)  # the order Shift+Tab cycles

# Where an "always" answer keeps its rule: this session only, this project's
# `.tui-agent/settings.local.json`, or the user's `config.toml` (every project).
RuleScope = Literal["session", "project", "user"]
RULE_SCOPES: tuple[RuleScope, ...] = get_args(RuleScope)
