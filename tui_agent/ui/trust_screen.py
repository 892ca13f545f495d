"""The start-up trust prompt: everything the workspace brings that would run, asked about once.

Before the app opens its first loop, `ask_trust` reads what the repository brings and is not
trusted yet (its `.mcp.json` servers, its hooks, its allow rules: `session.WorkspaceSetup`) and,
if anything is, shows `TrustScreen`: each item by kind with what it runs. "Trust" (y) remembers
them all for this workspace; "Don't trust" (n, Esc) leaves them off for this run, and the loop
says what it skipped. A changed item is new, so it is asked about again next time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tui_agent.session import TrustLine

if TYPE_CHECKING:
    from tui_agent.ui.app import TuiAgentApp

KIND_TITLES = {
    "server": "MCP servers (.mcp.json): started as programs",
    "hook": "Hooks: commands run on agent events",
    "allow rule": "Allow rules: tool calls that would run without asking",
    "skill": "Skills: instructions the model may load",
    "command": "Commands: prompts (and the commands in them) run by name",
}


class TrustScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    TrustScreen { align: center middle; }
    #trust-box {
        width: 90%; height: auto; max-height: 90%;
        border: round $warning; background: $surface; padding: 0 1;
    }
    #trust-box .title { text-style: bold; color: $warning; margin: 1 0 0 0; }
    #trust-box .kind { text-style: bold; margin: 1 0 0 0; }
    #trust-box VerticalScroll { height: auto; max-height: 24; }
    #trust-box Horizontal { height: auto; margin: 1 0; }
    #trust-box Button { margin: 0 2 0 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Trust"),
        Binding("n", "answer(False)", "Don't trust"),
        Binding("escape", "answer(False)", "Don't trust"),
    ]

    def __init__(self, workspace: str, lines: Sequence[TrustLine]) -> None:
        super().__init__(id="trust")
        self.workspace = workspace
        self.lines = tuple(lines)

    def compose(self) -> ComposeResult:
        with Vertical(id="trust-box"):
            yield Static(
                f"{self.workspace} brings things that run programs. Trust them?",
                classes="title",
            )
            with VerticalScroll():
                for kind in dict.fromkeys(line.kind for line in self.lines):
                    yield Static(KIND_TITLES.get(kind, kind), classes="kind")
                    for line in self.lines:
                        if line.kind == kind:
                            yield Static(_item(line))
            yield Static(
                "Trusted for this workspace until one of them changes. Not trusted: none of "
                "them runs, and you are asked again next time.",
                classes="hint",
            )
            with Horizontal():
                yield Button("Trust (y)", id="trust-yes", variant="warning")
                yield Button("Don't trust (n)", id="trust-no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "trust-yes")

    def action_answer(self, trusted: bool) -> None:
        self.dismiss(trusted)


def _item(line: TrustLine) -> Text:
    text = Text("● ")
    text.append(line.name, style="bold")
    detail = line.detail.splitlines()
    if detail:
        text.append(f"  {detail[0]}", style="dim")
    for more in detail[1:]:
        text.append(f"\n    {more}", style="dim")
    return text


async def ask_trust(app: TuiAgentApp) -> None:
    """Show the prompt when the workspace brings something untrusted; remember a yes."""
    read = app.hooks.repository
    if read is None:
        return
    setup = await read()
    if setup is None:
        return
    lines, trust = setup
    if not lines:
        return
    answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    app.push_screen(
        TrustScreen(app.loop.info.workspace, lines),
        lambda trusted: answer.set_result(bool(trusted)),
    )
    if await answer:
        await asyncio.to_thread(trust)
