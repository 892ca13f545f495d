"""Approvals: which calls run without asking, and asking the user about the rest.

Read-only tools never ask. Otherwise the mode decides (`yolo` allows everything, `auto-edit`
allows file edits) and then the rules: `"edit_file"` allows a tool, `"shell: git status"` allows
shell commands starting with those words, and a name with `*` allows every tool it matches
(`"mcp__git__*"`: all of one MCP server's tools). With no `ask` callback (a headless run) a
call that would need asking is denied with a result that tells the model why and how the user
can allow it. Questions are put one at a time, in the order the calls reach them, so an
"always" answer applies to the calls behind it.
"""

from __future__ import annotations

import asyncio
import fnmatch
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from tui_agent.tools._base import Tool
from tui_agent.vocab import ToolResult, error_result

ApprovalMode = Literal["ask", "auto-edit", "yolo"]
APPROVAL_MODES: tuple[ApprovalMode, ...] = ("ask", "auto-edit", "yolo")


@dataclass(frozen=True)
class ApprovalRequest:
    request_id: str
    call_id: str
    tool_name: str
    description: str  # one line: the command or the path
    preview: str  # a unified diff for edits and writes, the command for shell
    rule: str  # what "always" would allow


@dataclass(frozen=True)
class Decision:
    kind: Literal["once", "always", "deny"]
    reason: str | None = None  # with "deny": shown to the model

    @classmethod
    def once(cls) -> Decision:
        return cls("once")

    @classmethod
    def always(cls) -> Decision:
        return cls("always")

    @classmethod
    def deny(cls, reason: str | None = None) -> Decision:
        return cls("deny", reason)


Ask = Callable[[ApprovalRequest], Awaitable[Decision]]


def split_rule(rule: str) -> tuple[str, str | None]:
    """`"shell: git status"` -> ("shell", "git status"); `"edit_file"` -> ("edit_file", None)."""
    name, sep, pattern = rule.partition(":")
    if not sep:
        return rule.strip(), None
    return name.strip(), pattern.strip() or None


class Approvals:
    def __init__(
        self, mode: ApprovalMode = "ask", rules: Iterable[str] = (), ask: Ask | None = None
    ) -> None:
        self.mode = mode
        self._rules: list[str] = []
        for rule in rules:
            self.add_rule(rule)
        self._ask = ask
        self._asking = asyncio.Lock()

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(self._rules)

    def add_rule(self, rule: str) -> None:
        if rule not in self._rules:
            self._rules.append(rule)

    def allows(self, tool: Tool[Any], args: Any) -> bool:
        """Whether the call may run without asking anyone."""
        if tool.read_only or self.mode == "yolo":
            return True
        if self.mode == "auto-edit" and tool.edits_files:
            return True
        return any(self._rule_matches(rule, tool, args) for rule in self._rules)

    @staticmethod
    def _rule_matches(rule: str, tool: Tool[Any], args: Any) -> bool:
        name, pattern = split_rule(rule)
        if name != tool.name and not ("*" in name and fnmatch.fnmatchcase(tool.name, name)):
            return False
        return pattern is None or tool.matches_rule(pattern, args)

    async def review(
        self, tool: Tool[Any], args: Any, call_id: str, on_waiting: Callable[[], None]
    ) -> ToolResult | None:
        """None when the call may run; otherwise the result that replaces it."""
        if self.allows(tool, args):
            return None
        rule = tool.approval_rule(args)
        if self._ask is None:
            return error_result(
                f'"{tool.name}" ({tool.describe(args)}) needs the user\'s approval, but this run '
                "cannot ask anyone, so it was not run. The user can allow it by running again "
                f'with --yolo or with the approval rule "{rule}".'
            )
        async with self._asking:
            if self.allows(tool, args):  # an "always" given while this call waited
                return None
            request = ApprovalRequest(
                request_id=uuid.uuid4().hex,
                call_id=call_id,
                tool_name=tool.name,
                description=tool.describe(args),
                preview=await tool.preview(args),
                rule=rule,
            )
            on_waiting()
            decision = await self._ask(request)
        if decision.kind == "always":
            self.add_rule(rule)
        if decision.kind == "deny":
            text = f'The user denied "{tool.name}" ({request.description}).'
            if decision.reason:
                text += f" Their reason: {decision.reason}"
            return error_result(text)
        return None
