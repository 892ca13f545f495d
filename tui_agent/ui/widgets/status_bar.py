"""The status bar: provider/model, agent state, tokens, context %, approval mode, the commands'
sandbox, session id, and how many MCP servers are up (when any are configured).

In a narrow terminal, where the side column is folded, it also counts live tools and queued
items so nothing is hidden without a trace.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui_agent.ui.view_model import ViewModel


class StatusBar(Static):
    def __init__(self, vm: ViewModel, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.vm = vm
        self.show_counts = False

    def on_mount(self) -> None:
        self.refresh_status()

    def refresh_status(self) -> None:
        status = self.vm.status
        text = Text(no_wrap=True, overflow="ellipsis")
        if status.demo:
            text.append(" DEMO ", style="bold reverse yellow")
            text.append(" ")
        text.append(f"{status.provider}/{status.model}", style="bold")
        label = self.vm.agent_label()
        style = {"idle": "green", "cancelling": "red", "retrying": "yellow"}.get(label, "cyan")
        if label == "awaiting approval":
            style = "bold magenta"
        text.append("  ● ", style=style)
        text.append(label, style=style)
        if self.show_counts:
            text.append(f"  tools {len(self.vm.tools)}·^T  queue {len(self.vm.queue)}·^N")
        text.append(f"  ↑{_k(status.tokens_in)} ↓{_k(status.tokens_out)}")
        text.append(f"  ctx {status.context_percent}%")
        if self.vm.mcp:
            up = sum(server.state == "ready" for server in self.vm.mcp)
            broken = any(server.state in ("failed", "disabled") for server in self.vm.mcp)
            text.append(f"  mcp {up}/{len(self.vm.mcp)}", style="yellow" if broken else "")
        mode = status.approval_mode
        text.append(f"  {mode}", style="bold red" if mode == "yolo" else "")
        if status.sandbox:
            unsandboxed = status.sandbox in ("no sandbox", "sandbox off")
            text.append(f"  {status.sandbox}", style="bold red" if unsandboxed else "green")
        text.append(f"  {status.session_id}", style="dim")
        self.update(text)


def _k(tokens: int) -> str:
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}M"
    if tokens >= 1000:
        return f"{tokens / 1000:.1f}k"
    return str(tokens)
