"""What `/status`, `/permissions` and `/cost` show, as text: the app and the ACP agent (where
an editor sends them as commands) show the same.

`/cost` is what the session has spent, as a small table (from the loop's `CostReport`).

Rows: the session, the running (or last) turn, each sub-agent; columns: input tokens, of them
cache reads and cache writes, output tokens, USD ("-" where the model has no price). Then the
dearest tool calls (an estimate: the tokens each result added to the next request, priced as
input) and the budgets. Narrow enough for the transcript beside the side column.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_agent.loop.api import LoopInfo, PermissionRule
from tui_agent.loop.costs import CostLine, CostReport
from tui_agent.usage import usd

_HEAD = f"{'':<15}{'input':>8}{'cache rd':>9}{'cache wr':>9}{'output':>8}{'USD':>9}"


def cost_text(report: CostReport | None) -> str:
    if report is None:
        return "Costs: the session is still opening."
    lines = [f"Costs of {report.model} (prices: {report.price_source})", _HEAD]
    lines.append(_row("session", report.session))
    if report.turn is not None:
        lines.append(_row("this turn", report.turn))
    for sub in report.subagents:
        lines.append(_row(f"task: {sub.label}", sub))
    if report.tools:
        lines.append("Dearest tool results (tokens they added to a request):")
        for tool in report.tools:
            lines.append(f"  {_cut(tool.name, 22):<22}{_k(tool.tokens):>8}  {_usd(tool.cost_usd)}")
    budgets = [
        f"{what} {usd(limit)}"
        for what, limit in (
            ("session", report.max_budget_usd),
            ("turn", report.max_turn_budget_usd),
        )
        if limit is not None
    ]
    if budgets:
        lines.append("Budgets: " + ", ".join(budgets))
    if report.session.cost_usd is None:
        lines.append(
            "Price unknown: set price_input_per_mtok and price_output_per_mtok under the "
            "model's [models] table in config.toml."
        )
    return "\n".join(lines)


def _row(label: str, line: CostLine) -> str:
    usage = line.usage
    return (
        f"{_cut(label, 14):<15}{_k(usage.input):>8}{_k(usage.input_cache_read):>9}"
        f"{_k(usage.input_cache_creation):>9}{_k(usage.output):>8}{_usd(line.cost_usd):>9}"
    )


def _usd(amount: float | None) -> str:
    return "-" if amount is None else usd(amount)


def _k(tokens: int) -> str:
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}M"
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def status_text(info: LoopInfo) -> str:
    """What `/status` shows: the session's settings, the commands' sandbox in full."""
    sandbox = info.sandbox.summary() if info.sandbox is not None else "Sandbox: not known yet"
    return "\n".join(
        (
            f"Model: {info.provider}/{info.model}" + (" (built-in demo)" if info.demo else ""),
            f"Approval mode: {info.approval_mode}",
            sandbox,
            f"Session: {info.session_id}",
            f"Workspace: {info.workspace}",
        )
    )


def permissions_text(rules: Sequence[PermissionRule]) -> str:
    """What `/permissions` shows: each rule, numbered, with where it comes from."""
    if not rules:
        return (
            'No permission rules. Answer an approval with "always", or add rules to '
            "[permissions] allow/ask/deny in config.toml or to .tui-agent/settings.json "
            '("permissions": {"allow": [...]}); Claude Code\'s .claude/settings.json is read too.'
        )
    lines = ["Permission rules (deny wins, then ask, then allow, then the mode):"]
    for number, rule in enumerate(rules, 1):
        note = "" if rule.active else "  (not trusted yet: asked when it would allow a call)"
        lines.append(f"{number:>3}. {rule.effect:<5} {rule.text}   {rule.source}{note}")
    lines.append("/permissions remove N removes one (from its file too).")
    return "\n".join(lines)
