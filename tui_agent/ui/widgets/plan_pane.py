"""The plan pane: the model's plan (`todo_write`), one line a step, updated in place.

Hidden while there is no plan. Done steps are struck through, the step in progress is bold;
the border title counts what is done.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui_agent.ui.view_model import ViewModel
from tui_agent.ui.widgets.pane import FollowsViewModel

GLYPHS = {"completed": "✔", "in_progress": "▶", "pending": "○"}
STYLES = {"completed": "dim strike", "in_progress": "bold", "pending": ""}


class PlanPane(Static):
    def __init__(self, vm: ViewModel, *, id: str | None = None) -> None:
        super().__init__("", markup=False, id=id)
        self.vm = vm
        self.border_title = "Plan"
        FollowsViewModel(self, vm, ("plan",), self.refresh_plan)

    def on_mount(self) -> None:
        self.refresh_plan()

    def refresh_plan(self) -> None:
        plan = self.vm.plan
        self.display = bool(plan)
        done = sum(1 for item in plan if item.status == "completed")
        self.border_title = f"Plan ({done}/{len(plan)})"
        text = Text()
        for index, item in enumerate(plan):
            if index:
                text.append("\n")
            text.append(f"{GLYPHS[item.status]} ", style=STYLES[item.status] or "dim")
            text.append(item.content, style=STYLES[item.status])
        self.update(text)
