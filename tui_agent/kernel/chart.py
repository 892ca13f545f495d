"""What the three kernel StateCharts share: error recording and `Transitioned` emissions.

python-statemachine turns any exception in a callback into an `error.execution` event and drops
it when nothing handles it. Each machine binds that event on its live wrapper state to
`record_error`, which keeps the error in an `ErrorLog` shared by every machine of one agent (tests
assert it stays empty) and never lets it escape; the log hands each error to its `report`
callback as it comes, so the loop can tell the user. Every state change is also emitted as
`Transitioned`, for the live inspector.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, ClassVar

from tui_agent.kernel._statemachine_engine import EngineChart
from tui_agent.kernel.events import KernelEvent, Machine, Transitioned

Emit = Callable[[KernelEvent], None]
_log = logging.getLogger(__name__)


class ErrorLog(list[BaseException]):
    """The errors an agent's machines caught. Each one is kept and handed to `report`; a report
    that fails is logged, never raised into the machine that recorded the error."""

    def __init__(self, report: Callable[[BaseException], None] | None = None) -> None:
        super().__init__()
        self._report = report

    def append(self, error: BaseException) -> None:
        super().append(error)
        if self._report is None:
            return
        try:
            self._report(error)
        except Exception:
            _log.exception("reporting a kernel error failed (the error: %r)", error)


def guarded_emit(emit: Emit, errors: list[BaseException]) -> Emit:
    """`emit` that records a listener's exception instead of letting it break a transition
    half-way (a raising listener must not wedge a turn)."""

    def guarded(event: KernelEvent) -> None:
        try:
            emit(event)
        except Exception as error:
            errors.append(error)

    return guarded


class KernelChart(EngineChart):
    """Base of the agent, turn and tool machines (abstract: it declares no states)."""

    machine_kind: ClassVar[Machine]

    def __init__(
        self, emit: Emit, machine_id: str, errors: list[BaseException], *, start: str | None = None
    ) -> None:
        """`start` names the state a run begins in, when not the declared initial one."""
        self._emit = emit
        self.machine_id = machine_id
        self.errors = errors
        super().__init__(start_value=start)

    def reset_chart(self) -> None:
        """Back to before activation (see `EngineChart.restart`); only from a final state."""
        assert self.is_terminated, "only a machine in a final state can be reset"
        self.restart()

    async def activate(self) -> None:
        """Enter the initial state inside the running loop. Announced first, so that eventless
        transitions taken during activation are reported after it."""
        [start] = self.start_configuration_values or [None]
        state = self.initial_state if start is None else self.states_map[start]
        assert state is not None  # every kernel machine declares its states
        while state.states:
            state = next(child for child in state.states if child.initial)
        self._emit(Transitioned(self.machine_kind, self.machine_id, "start", "", state.id))
        await self.activate_initial_state()

    @property
    def state_path(self) -> str:
        """The active atomic state, dotted from the outermost ancestor ("idle.ready")."""
        atomic = [s for s in self.configuration if s.is_atomic]
        if not atomic:
            return ""
        state = atomic[0]
        names = [state.id]
        parent = state.parent
        while parent is not None and parent.id != "live":
            names.append(parent.id)
            parent = parent.parent
        return ".".join(reversed(names))

    def after_transition(self, event: Any, source: Any, target: Any) -> None:
        if target is None:
            return  # a targetless handler changes no state
        self._emit(
            Transitioned(
                self.machine_kind,
                self.machine_id,
                "" if event is None else str(event),
                source.id if source is not None else "",
                target.id,
            )
        )

    def record_error(self, error: BaseException | None = None) -> None:
        if error is not None:
            self.errors.append(error)
