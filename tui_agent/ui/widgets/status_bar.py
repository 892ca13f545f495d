"""The status bar: provider/model, agent state, tokens, the session's cost (when the model has a
price), context %, approval mode, the commands' sandbox, session id, and how many MCP servers
are up (when any are configured). Its tooltip details the tokens: cache reads and writes.

In a narrow terminal, where the side column is folded, it also counts live tools and queued
items and shows the plan's progress, so nothing is hidden without a trace. When the line does
not fit, whole segments give way by priority, lowest first: the approval mode never does (yolo
must always show), then the agent state, the plan, the sandbox and so on down to the session id.
Its own line (a status-line command's output, or the git branch) sits after the context %.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui_agent.lazy_dataclass import dataclass
from tui_agent.ui.state import Status
from tui_agent.ui.view_model import ViewModel, tokens_text
from tui_agent.ui.widgets.pane import FollowsViewModel

# What stays longest when the line is too narrow (higher stays).
MODE, STATE, DEMO, PLAN, SANDBOX, CONTEXT, OWN, MODEL, COST, TOKENS, MCP, COUNTS, SESSION = (
    100,
    90,
    85,
    80,
    75,  # the sandbox segment (h-sandbox) sits right below the plan
    70,
    65,  # the status-line command's output, or the git branch (ui/status_line.py)
    60,
    55,
    50,
    45,
    40,
    10,
)


@dataclass(frozen=True)
class Segment:
    text: str
    style: str
    priority: int
    head: str = ""  # drawn before `text` in the same style (the state's dot)
    rich: Text | None = None  # drawn instead of `text` (which is its plain text), styles kept


class StatusBar(Static):
    def __init__(self, vm: ViewModel, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.vm = vm
        self.show_counts = False
        self.own_line = Text()  # the status-line command's first line, or the git branch
        self._shown = Text()
        # The counts of tools and queued items are shown on narrow terminals.
        FollowsViewModel(self, vm, ("status", "tools", "queue"), self.refresh_status)

    def on_mount(self) -> None:
        self.refresh_status()

    def segments(self) -> list[Segment]:
        status = self.vm.status
        parts: list[Segment] = []
        if status.demo:
            parts.append(Segment(" DEMO ", "bold reverse yellow", DEMO))
        parts.append(Segment(f"{status.provider}/{status.model}", "bold", MODEL))
        label = self.vm.agent_label()
        style = {"idle": "green", "cancelling": "red", "retrying": "yellow"}.get(label, "cyan")
        if label == "awaiting approval":
            style = "bold magenta"
        parts.append(Segment(label, style, STATE, head="● "))
        if self.show_counts:
            counts = f"tools {len(self.vm.tools)}·^T  queue {len(self.vm.queue)}·^N"
            parts.append(Segment(counts, "", COUNTS))
            if self.vm.plan:
                done = sum(item.status == "completed" for item in self.vm.plan)
                parts.append(Segment(f"plan {done}/{len(self.vm.plan)}", "", PLAN))
        tokens = f"↑{tokens_text(status.tokens_in)} ↓{tokens_text(status.tokens_out)}"
        parts.append(Segment(tokens, "", TOKENS))
        if status.cost_usd is not None:
            from tui_agent.usage import usd  # the pricer's module loads with the first cost

            parts.append(Segment(usd(status.cost_usd), "", COST))
        parts.append(Segment(f"ctx {status.context_percent}%", "", CONTEXT))
        if self.own_line.plain.strip():
            parts.append(Segment(self.own_line.plain, "", OWN, rich=self.own_line))
        if self.vm.mcp:
            up = sum(server.state == "ready" for server in self.vm.mcp)
            broken = any(server.state in ("failed", "disabled") for server in self.vm.mcp)
            parts.append(Segment(f"mcp {up}/{len(self.vm.mcp)}", "yellow" if broken else "", MCP))
        mode = status.approval_mode
        mode_style = {"yolo": "bold red", "plan": "bold cyan"}.get(mode, "")
        parts.append(Segment(mode, mode_style, MODE))
        if status.sandbox:
            unsandboxed = status.sandbox in ("no sandbox", "sandbox off")
            parts.append(Segment(status.sandbox, "bold red" if unsandboxed else "green", SANDBOX))
        parts.append(Segment(status.session_id, "dim", SESSION))
        return parts

    def refresh_status(self) -> None:
        parts = _fit(self.segments(), self.size.width)
        text = Text(no_wrap=True, overflow="ellipsis")
        for index, part in enumerate(parts):
            # The gap takes the segment's style (as it always has, so pictures stay the same),
            # but after the DEMO badge it is one plain space.
            gap = "  " if index else ""
            if index and parts[index - 1].priority == DEMO:
                text.append(" ")
                gap = ""
            if part.head:
                text.append(gap + part.head, style=part.style)
                gap = ""
            if part.rich is not None:
                text.append(gap)
                text.append_text(part.rich)
            else:
                text.append(gap + part.text, style=part.style)
        # It follows the tools, so every call of every sub-agent asks: the same line is not
        # drawn again, and a new one never needs a layout (`#status` is one row high).
        if text != self._shown:
            self._shown = text
            self.update(text, layout=False)
        tip = usage_tip(self.vm.status)
        if tip != self.tooltip:  # the screen re-checks its tooltip on every set
            self.tooltip = tip


def usage_tip(status: Status) -> str:
    """The tokens in full: what the cache served and what it stored (/cost has the rest)."""
    if not status.tokens_in and not status.tokens_out:
        return "no requests yet (/cost)"
    from tui_agent.usage import usd

    fresh = status.tokens_in - status.cache_read - status.cache_write
    return (
        f"input {status.tokens_in:,} tokens: {status.cache_read:,} cache reads, "
        f"{status.cache_write:,} cache writes, {fresh:,} uncached\n"
        f"output {status.tokens_out:,} tokens\n"
        f"session cost {usd(status.cost_usd)}  (/cost)"
    )


def _fit(parts: list[Segment], width: int) -> list[Segment]:
    """Drop the lowest-priority segments until the line fits (width 0: not laid out yet)."""
    kept = list(parts)
    while width and len(kept) > 1 and sum(len(p.head + p.text) + 2 for p in kept) - 2 > width:
        kept.remove(min(kept, key=lambda part: part.priority))
    return kept
