"""The live machine inspector (/inspect or F2): every machine's state and the last transitions.

Reads the view model's machine table (seeded from `snapshot().machine_states`, then kept by
`MachineTransition` events) and redraws when the app says it changed.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui_agent.ui.view_model import ViewModel

TRANSITIONS_SHOWN = 40


def _rank(machine_id: str) -> tuple[int, str]:
    """The agent first, then turns, then tool calls, each group in id order."""
    for rank, prefix in enumerate(("agent", "turn")):
        if machine_id.startswith(prefix):
            return rank, machine_id
    return 2, machine_id


class MachineInspector(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,f2,q", "dismiss", "Close")]

    def __init__(self, vm: ViewModel) -> None:
        super().__init__(id="inspector")
        self.vm = vm
        self._states = Static("", markup=False, classes="states")
        self._transitions = Static("", markup=False, classes="transitions")
        self.states_text = Text()

    def compose(self) -> ComposeResult:
        with Vertical(id="inspector-box"):
            yield Static("Machines (live)", classes="title")
            yield self._states
            yield Static("Last transitions", classes="title")
            with VerticalScroll():
                yield self._transitions

    def on_mount(self) -> None:
        self.refresh_machines()

    def refresh_machines(self) -> None:
        machines = sorted(self.vm.machines.states.items(), key=lambda item: _rank(item[0]))
        width = max((len(machine_id) for machine_id, _ in machines), default=0) + 2
        states = Text()
        for machine_id, state in machines:
            states.append(f"{machine_id:<{width}}", style="bold")
            states.append(f"{state}\n")
        self.states_text = states or Text("(no machine has reported yet)", style="dim")
        self._states.update(self.states_text)
        text = Text()
        recent = list(self.vm.machines.transitions)[-TRANSITIONS_SHOWN:]
        for event in reversed(recent):
            text.append(f"{event.machine_id:<18}", style="bold")
            text.append(f" {event.source} ")
            text.append(f"─{event.event}→", style="dim")
            text.append(f" {event.target}\n")
        self._transitions.update(text or Text("(none yet)", style="dim"))

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
