"""Approvals: which calls run without asking, asking the person about the rest, and plan mode.

The order is fixed: a deny rule refuses the call in every mode, yolo included; plan mode refuses
whatever is not read-only (the model is told to present a plan); a call that asks to leave the
sandbox always asks; then ask rules, then allow rules (`_rules.py`), then the mode:

    plan       read-only tools run; edits and commands are refused (see above)
    ask        read-only tools run; everything else asks
    auto-edit  read-only tools and file edits run (the tools keep them inside the workspace);
               a shell command runs when it would run sandboxed, asks otherwise
    yolo       everything runs (the sandbox still applies)

With no `ask` callback (a headless run) a call that would ask is denied with a result that
names the rule that would allow it and where to put it. Questions are put one at a time, in the
order the calls reach them, so an "always" answer applies to the calls behind it; it adds the
rule for this session and, when the person chose so, `keep` writes it to the project's or the
user's settings. The mode and the rules live here, on the one object a sub-agent shares with
its parent. A turn a custom command started with `allowed-tools` (`limit_turn`) is narrower
still: after the deny rules and plan mode, only the calls those rules allow run (unasked).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Literal

from tui_agent.lazy_dataclass import dataclass
from tui_agent.tools._base import Tool
from tui_agent.tools._rules import Rule, RuleError, Ruleset, RuleStore, Verdict, parse_rule
from tui_agent.vocab import (
    APPROVAL_MODES,
    ApprovalMode,
    FileChange,
    RuleScope,
    ToolResult,
    error_result,
)

__all__ = [
    "APPROVAL_MODES",
    "ApprovalMode",
    "ApprovalRequest",
    "Approvals",
    "Decision",
    "HookDecision",
]

RequestKind = Literal["tool", "plan", "trust"]

PLAN_REFUSAL = (
    '"{name}" was not run: tui-agent is in plan mode, where nothing may change. Read and '
    "search as you need, then present your plan with exit_plan_mode (the plan in Markdown); the "
    "person leaves plan mode when they accept it."
)
SCOPE_SOURCES: dict[RuleScope, str] = {
    "session": "this session",
    "project": ".tui-agent/settings.local.json",
    "user": "config.toml",
}


@dataclass(frozen=True)
class ApprovalRequest:
    request_id: str
    call_id: str
    tool_name: str
    description: str  # one line: the command or the path
    preview: str  # a unified diff for edits and writes, the command for shell, the plan
    rule: str  # what "always" would allow, as shown ("" when nothing can be remembered)
    rules: tuple[str, ...] = ()  # the rules "always" adds
    kind: RequestKind = "tool"
    sandboxed: bool | None = None  # a command: whether it would run inside the sandbox
    why: str = ""  # why this call asks when the mode alone would not have asked
    change: FileChange | None = None  # an edit's or write's file, whole, before and after

    @classmethod
    def trust(cls, what: str, question: str, listing: str) -> ApprovalRequest:
        """Whether to trust something that came with the workspace (its MCP servers, its
        permission rules): asked once, and the answer is kept for the workspace."""
        return cls(
            request_id=uuid.uuid4().hex,
            call_id="",
            tool_name=what,
            description=question,
            preview=listing,
            rule="this workspace",
            kind="trust",
        )


@dataclass(frozen=True)
class Decision:
    kind: Literal["once", "always", "deny"]
    reason: str | None = None  # with "deny": shown to the model
    keep: RuleScope = "session"  # with "always": where the rule is kept
    mode: ApprovalMode | None = None  # a plan accepted: the mode to continue in

    @classmethod
    def once(cls) -> Decision:
        return cls("once")

    @classmethod
    def always(cls, keep: RuleScope = "session") -> Decision:
        return cls("always", keep=keep)

    @classmethod
    def deny(cls, reason: str | None = None) -> Decision:
        return cls("deny", reason)


Ask = Callable[[ApprovalRequest], Awaitable[Decision]]


@dataclass(frozen=True)
class HookDecision:
    """What the person's `PreToolUse` hooks said of a call: "allow" spares the question the mode
    alone would ask (never a deny or ask rule's, nor leaving the sandbox), "ask" asks even where
    nothing else would; "deny" is refused by the executor before approvals see it."""

    effect: Literal["allow", "ask", "deny"]
    reason: str = ""


class Approvals:
    def __init__(
        self,
        mode: ApprovalMode = "ask",
        rules: Iterable[str | Rule] = (),
        ask: Ask | None = None,
        *,
        store: RuleStore | None = None,
        ask_trust: bool = True,
    ) -> None:
        self._mode = mode
        self.ruleset = Ruleset()
        for rule in rules:
            self.ruleset.add(rule if isinstance(rule, Rule) else parse_rule(rule))
        self._ask = ask
        self._store = store  # the settings files (None: rules live only in this session)
        # The person declined the project's allow rules (or was asked at start-up already).
        self._trust_refused = not ask_trust
        self._mode_listeners: list[Callable[[ApprovalMode], None]] = []
        self._asking = asyncio.Lock()
        self._turn_tools: tuple[Ruleset, str] | None = None  # a command's `allowed-tools`

    # ------------------------------------------------------------------ mode and rules

    @property
    def mode(self) -> ApprovalMode:
        return self._mode

    @mode.setter
    def mode(self, mode: ApprovalMode) -> None:
        if mode != self._mode:
            self._mode = mode
            for listener in list(self._mode_listeners):
                listener(mode)

    def on_mode_change(self, listener: Callable[[ApprovalMode], None]) -> None:
        self._mode_listeners.append(listener)

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(rule.text for rule in self.ruleset.rules)

    def add_rule(self, rule: str, *, source: str = "session") -> None:
        self.ruleset.add(parse_rule(rule, source=source))

    def limit_turn(self, allowed: Sequence[str] | None) -> None:
        """The running turn may use only the tools these rules allow (a custom command's
        `allowed-tools`, in rule syntax: `Bash(git add:*)`, `Read`); they run without asking,
        every other call is refused. None: no limit (the turn ended). A text that is no rule
        allows nothing."""
        if allowed is None:
            self._turn_tools = None
            return
        limit = Ruleset()
        for text in allowed:
            try:
                limit.add(parse_rule(text, source="the command's allowed-tools"))
            except RuleError:
                continue
        self._turn_tools = (limit, ", ".join(allowed))

    def _outside_limit(self, tool: Tool[Any], args: Any) -> ToolResult | None:
        if self._turn_tools is None:
            return None
        limit, shown = self._turn_tools
        if limit.decide(tool, args).effect == "allow":
            return None
        return error_result(
            f'"{tool.name}" ({tool.describe(args)}) is not among the tools this command allows '
            f"({shown}); it was not run."
        )

    def allows(self, tool: Tool[Any], args: Any) -> bool:
        """Whether the call may run without asking anyone."""
        verdict = self.ruleset.decide(tool, args)
        if self._turn_tools is not None:
            return verdict.effect != "deny" and self._outside_limit(tool, args) is None
        if verdict.effect == "deny" or (self._mode == "plan" and not tool.plan_safe(args)):
            return False
        return self._why_ask(tool, args, verdict) is None

    def _why_ask(
        self, tool: Tool[Any], args: Any, verdict: Verdict, hook: HookDecision | None = None
    ) -> str | None:
        """None when the call runs; otherwise why it asks ("" when the mode is the reason)."""
        why = self._why_rules_ask(tool, args, verdict)
        if hook is not None and hook.effect == "allow" and why == "":
            return None
        if hook is not None and hook.effect == "ask" and why is None:
            return "a hook asks" + (f": {hook.reason}" if hook.reason else "")
        return why

    def _why_rules_ask(self, tool: Tool[Any], args: Any, verdict: Verdict) -> str | None:
        if tool.leaves_sandbox(args):
            return "it asks to run outside the sandbox"
        if verdict.unreadable and self._mode != "yolo":
            return "the command could not be parsed, so no rule can allow it"
        if verdict.effect == "ask" and verdict.rule is not None:
            return f'the rule "{verdict.rule.text}" ({verdict.rule.source}) asks'
        if verdict.effect == "allow" or tool.read_only or self._mode == "yolo":
            return None
        if self._mode == "auto-edit" and (tool.edits_files or tool.runs_sandboxed(args)):
            return None
        return ""

    # ------------------------------------------------------------------ one call

    async def review(
        self,
        tool: Tool[Any],
        args: Any,
        call_id: str,
        on_waiting: Callable[[], None],
        hook: HookDecision | None = None,
    ) -> ToolResult | None:
        """None when the call may run; otherwise the result that replaces it."""
        verdict = self.ruleset.decide(tool, args)
        if verdict.effect == "deny" and verdict.rule is not None:
            rule = verdict.rule
            return error_result(
                f'"{tool.name}" ({tool.describe(args)}) is denied by the rule "{rule.text}" '
                f"({rule.source}); it was not run."
            )
        if self._mode == "plan" and not tool.plan_safe(args):
            return error_result(PLAN_REFUSAL.format(name=tool.name))
        if self._turn_tools is not None:
            return self._outside_limit(tool, args)
        why = self._why_ask(tool, args, verdict, hook)
        if why is None:
            return None
        if self._ask is None:
            return error_result(self._headless_denial(tool, args, why))
        async with self._asking:
            verdict = self.ruleset.decide(tool, args)
            # An "always" given while this call waited counts.
            why = self._why_ask(tool, args, verdict, hook)
            if why == "" and await self._trust_project(tool, args, on_waiting):
                return None
            if why is None:
                return None
            leaving = tool.leaves_sandbox(args)
            rules = () if leaving else self.ruleset.suggestions(tool, args)
            request = ApprovalRequest(
                request_id=uuid.uuid4().hex,
                call_id=call_id,
                tool_name=tool.name,
                description=tool.describe(args),
                preview=await tool.preview(args),
                rule=", ".join(rules),
                rules=rules,
                sandboxed=tool.runs_sandboxed(args) if tool.name == "shell" else None,
                why=why,
                change=await tool.proposed_change(args),
            )
            return await self._put(request, on_waiting)

    async def _put(
        self, request: ApprovalRequest, on_waiting: Callable[[], None]
    ) -> ToolResult | None:
        """Asks the person about a call (the asking lock held); None when they allow it,
        otherwise the denial that replaces it. An "always" keeps `request.rules`."""
        assert self._ask is not None
        on_waiting()
        decision = await self._ask(request)
        if decision.kind == "always" and request.rules:
            self._remember(request.rules, decision.keep)
        if decision.kind == "deny":
            text = f'The user denied "{request.tool_name}" ({request.description}).'
            if decision.reason:
                text += f" Their reason: {decision.reason}"
            return error_result(text)
        return None

    async def _trust_project(
        self, tool: Tool[Any], args: Any, on_waiting: Callable[[], None]
    ) -> bool:
        """A project's untrusted allow rule would allow this call: ask (once a session) whether
        the project's allow rules may count, as for its MCP servers. True: the call runs."""
        untrusted = self.ruleset.untrusted()
        assert self._ask is not None
        if self._trust_refused or self.ruleset.decide(tool, args, trusting=True).effect != "allow":
            return False
        sources = sorted({rule.source for rule in untrusted})
        on_waiting()
        decision = await self._ask(
            ApprovalRequest.trust(
                "permission rules from this project",
                f"Let the {len(untrusted)} allow rule(s) in {', '.join(sources)} run "
                "tool calls without asking?",
                "\n".join(f"allow {rule.text}   ({rule.source})" for rule in untrusted),
            )
        )
        if decision.kind == "deny":
            self._trust_refused = True
            return False
        self.ruleset.trust(untrusted)
        if decision.kind == "always" and self._store is not None:
            self._store.trust(untrusted)
        return True

    def _remember(self, rules: tuple[str, ...], keep: RuleScope) -> None:
        for rule in rules:
            self.add_rule(rule, source=SCOPE_SOURCES[keep])
        if keep != "session" and self._store is not None:
            self._store.keep(keep, rules)

    def _headless_denial(self, tool: Tool[Any], args: Any, why: str) -> str:
        head = f'"{tool.name}" ({tool.describe(args)}) was not run: '
        if tool.leaves_sandbox(args):
            return head + (
                "it asks to run outside the sandbox, which only the person can allow, and this "
                "run cannot ask anyone. Run it inside the sandbox, or the person can start the "
                "run with --sandbox off."
            )
        trusting = self.ruleset.decide(tool, args, trusting=True)
        if trusting.effect == "allow" and trusting.rule is not None:
            return head + (
                f'the project\'s rule "{trusting.rule.text}" ({trusting.rule.source}) would allow '
                "it, but the person has not trusted this project's rules yet (the app asks; "
                "--yolo trusts them)."
            )
        rules = self.ruleset.suggestions(tool, args)
        if not rules:
            return (
                head
                + f"{why}, and this run cannot ask anyone. The person can run again with --yolo."
            )
        shown = ", ".join(f'"{rule}"' for rule in rules)
        where = (
            self._store.where
            if self._store is not None
            else "under [permissions] allow in config.toml"
        )
        reason = f"{why}; " if why else ""
        return head + (
            f"{reason}it needs the person's approval and this run cannot ask anyone. To allow "
            f"it, the person can add {shown} {where}, or run again with "
            "--approval-mode auto-edit (edits, sandboxed commands) or --yolo."
        )

    # ------------------------------------------------------------------ plans

    async def present_plan(self, plan: str, call_id: str) -> str:
        """Show the model's plan to the person (plan mode); returns what the model reads."""
        if self._mode != "plan":
            return f"Not in plan mode (the mode is {self._mode}): nothing to approve. Carry on."
        if self._ask is None:
            return (
                "The plan is printed for the person, who reads it after this run. Stop here: "
                "end your turn with a one-line summary and no more tool calls."
            )
        async with self._asking:
            decision = await self._ask(
                ApprovalRequest(
                    request_id=uuid.uuid4().hex,
                    call_id=call_id,
                    tool_name="exit_plan_mode",
                    description="the plan",
                    preview=plan,
                    rule="",
                    kind="plan",
                )
            )
        if decision.kind == "deny":
            text = "The person wants to keep planning; stay in plan mode and revise the plan."
            if decision.reason:
                text += f" What they want changed: {decision.reason}"
            return text
        mode = decision.mode if decision.mode not in (None, "plan") else "ask"
        assert mode is not None
        self.mode = mode
        return f"The person accepted the plan and chose the {mode} mode: carry the plan out now."
