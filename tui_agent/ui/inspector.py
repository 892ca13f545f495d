"""The live machine inspector (/inspect or F2): the machines' states and the last transitions.

Reads the view model's machine table (seeded from `snapshot().machine_states`, then kept by
`MachineTransition` events: the live machines and the last few finished ones) and redraws when
the view model says they changed. The library's event names are made readable: an eventless
transition is `(auto)`, and `done.invoke.<state>.<id>` (the end of the work a state invoked) is
`<state> done`.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from tui_agent.ui.view_model import ViewModel
from tui_agent.ui.widgets.pane import FollowsViewModel

TRANSITIONS_SHOWN = 40


_INVOKE = re.compile(r"(done|error)\.invoke\.([\w.]+?)\.[0-9a-f]+")


def readable_event(name: str) -> str:
    """`` → `(auto)`; `done.invoke.gating.28a4c899` → `gating done` (`error.…` → `failed`)."""
    if not name:
        return "(auto)"
    if (match := _INVOKE.fullmatch(name)) is not None:
        outcome, state = match.groups()
        return f"{state} {'done' if outcome == 'done' else 'failed'}"
    return name


def machine_label(machine_id: str) -> str:
    """Tool machines are named by their call id: say they are tools."""
    return machine_id if _rank(machine_id)[0] < 2 else f"tool {machine_id}"


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
        self._follow = FollowsViewModel(self, vm, ("machines",), self.refresh_machines)

    def compose(self) -> ComposeResult:
        with Vertical(id="inspector-box"):
            yield Static("Machines (live, then the last finished)", classes="title")
            yield self._states
            yield Static("Last transitions", classes="title")
            with VerticalScroll():
                yield self._transitions
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_machines()

    def refresh_machines(self) -> None:
        machines = sorted(self.vm.machines.states.items(), key=lambda item: _rank(item[0]))
        labels = [machine_label(machine_id) for machine_id, _ in machines]
        width = max((len(label) for label in labels), default=0) + 2
        states = Text()
        finished = set(self.vm.machines.finished)
        for label, (machine_id, state) in zip(labels, machines, strict=True):
            states.append(f"{label:<{width}}", style="bold")
            states.append(f"{state}\n", style="dim" if machine_id in finished else "")
        self.states_text = states or Text("(no machine has reported yet)", style="dim")
        self._states.update(self.states_text)
        text = Text()
        recent = list(self.vm.machines.transitions)[-TRANSITIONS_SHOWN:]
        for event in reversed(recent):
            text.append(f"{machine_label(event.machine_id):<18}", style="bold")
            text.append(f" {event.source or '·'} ")
            text.append(f"─{readable_event(event.event)}→", style="dim")
            text.append(f" {event.target}\n")
        self._transitions.update(text or Text("(none yet)", style="dim"))

    def on_unmount(self) -> None:
        self._follow.stop()

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)


def toggle_inspector(app: App[Any], vm: ViewModel) -> None:
    """F2: the inspector over the app's screen, or, when it is up, closed."""
    if isinstance(app.screen, MachineInspector):
        app.screen.dismiss(None)
    else:
        app.push_screen(MachineInspector(vm))
