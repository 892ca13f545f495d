"""python-statemachine's private surface, fenced: the kernel's engine and its chart base.

Nothing else in `tui_agent` touches a private name or a non-public module of python-statemachine
(`scripts/check_fences.py` enforces it); the canaries in
`tests/kernel/test_statemachine_canaries.py` check every name below against the installed
library, and `tests/kernel/test_engine_differential.py` runs the three machines under this
engine and under the library's own on the same generated inputs.

The engine: python-statemachine's async engine, cheaper per event. The library picks transitions
generically on every event and after every microstep: it walks each active atomic state and all
its ancestors, tests every transition with a predicate, and matches dotted event names by
splitting them into new `Event` objects. The kernel's machines never change shape at run time,
so what can be computed once per state is: the candidates (the state's own transitions, then its
ancestors', in the library's order, without initial ones), split into eventless ones and ones
with events, each event descriptor reduced to the two strings a match needs. Selection then only
runs guards: the same candidates in the same order, the same guards, the same conflict filter.

The transitions that activate a machine are built once per machine class and start value (the
library builds a new empty source state and new transitions for every activation, which a
reused tool machine does once per call); they carry no callbacks.

Transition content (`before`, `on`, `after`) also runs in order here. The library runs a group
given no error handler (`before` and `after`) through `asyncio.gather`, which wraps each callback
in a task and costs two trips through the event loop per microstep; every kernel transition has
an `after` callback (the `Transitioned` emission). In order, a failing callback still raises to
the microstep as it did through `gather`; what goes is only the concurrency of several async
callbacks of one group, which no kernel machine has.

Which states a set of transitions exits and enters depends only on those transitions and the
configuration (no kernel machine has history states): the plans are kept per machine, keyed
by both, instead of computed again on every microstep (a tool machine takes the same two
microsteps for every call; a turn the same few for every step). A plan holds the machine's own
state objects, so it is never shared between machines; it outlives the engine, which a reused
tool machine replaces per call.

Smaller things: no kernel machine registers `prepare_event` callbacks or validators, so their
lookups are skipped; an invoke named by a method skips a runtime Protocol check; and the invoke
manager no longer points back at its engine, so an engine let go of is freed at once.

`TUI_AGENT_KERNEL_ENGINE=stock` (or `use_engine("stock")`) runs the machines on the library's
own `AsyncEngine` instead: the reference the differential test and the benchmark compare with.
Inside `count_steps()`, machines built run on a subclass of the kernel's engine that counts the
events it takes and the microsteps it runs (for the benchmark and the tests that prove a step's
cost; the product never pays for the counting).

Private names and non-public modules touched (name: why):
- `statemachine.engines.async_`: `AsyncEngine`, the base of `KernelEngine` and the stock engine.
- `statemachine.event_data`: `EventData`, built to give callbacks the library's arguments.
- `statemachine.invoke`: `InvokeManager`, subclassed to skip the Protocol check.
- `statemachine.orderedset`: `OrderedSet`, the set type the engine's selection returns.
- `StateChart._get_engine`: overridden to choose our engine or the stock one.
- `StateChart._engine`: replaced by `EngineChart.restart` when a tool machine is reused.
- `StateChart._callbacks`: the callback registry, asked which keys have callbacks and called.
- `BaseEngine._cache`: the per-macrostep argument cache `_get_args_kwargs` fills.
- `BaseEngine._debug`: read for the invoke manager's view of the engine.
- `BaseEngine._log_id`: read for the invoke manager's view of the engine.
- `BaseEngine._invoke_manager`: replaced by one bound to that view, not to the engine.
- `BaseEngine._initial_transitions`: overridden to build activation transitions once.
- `BaseEngine._filter_conflicting_transitions`: called when two or more are enabled.
- `BaseEngine._prepare_exit_states`: overridden to reuse a machine's exit plans.
- `BaseEngine._prepare_entry_states`: overridden to reuse a machine's entry plans.
- `BaseEngine._on_error_handler`: the error handler guards are run with.
- `AsyncEngine._get_args_kwargs`: overridden to skip `prepare` lookups; called by the library.
- `AsyncEngine._conditions_match`: overridden to skip validator lookups.
- `AsyncEngine._execute_transition_content`: overridden to run content in order.
- `InvokeManager._resolve_handler`: overridden to skip the Protocol check for method names.
- `InvokeManager._engine`: what the manager reads through it must be only `sm`, `_debug` and
  `_log_id`, the three things `_EngineView` offers.
Public but undocumented names this module relies on too: `select_transitions` and
`select_eventless_transitions` (re-implemented), `StateChart.history_values`, the model's state
field and `start_configuration_values` (reset by `restart`), `Transition.initial`,
`.is_eventless`, `.events`, `.cond.key`, `.validators.key`, `StateChart.prepare.key`,
`EventData.args` and `.extended_kwargs`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from statemachine import StateChart
from statemachine.engines.async_ import AsyncEngine
from statemachine.event_data import EventData
from statemachine.invoke import InvokeManager
from statemachine.orderedset import OrderedSet

# A descriptor as two strings: an event matches when `exact` is empty (`*`), equals it, or
# starts with `prefix` (`exact` + ".").
_Descriptor = tuple[str, str]
_Candidates = tuple[tuple[Any, tuple[_Descriptor, ...]], ...]


def _descriptor(descriptor: str) -> _Descriptor:
    """A dotted descriptor matches itself and every event below it; `*` matches all."""
    if descriptor == "*":
        descriptor = ""
    elif descriptor.endswith(".*"):
        descriptor = descriptor[:-2]
    elif descriptor.endswith("."):
        descriptor = descriptor[:-1]
    return descriptor, descriptor + "."


def _matches(descriptors: tuple[_Descriptor, ...], event: str) -> bool:
    for exact, prefix in descriptors:
        if not exact or event == exact or event.startswith(prefix):
            return True
    return False


class _StateCandidates:
    """One atomic state's candidate transitions, eventless and with events."""

    __slots__ = ("evented", "eventless", "state")

    def __init__(self, state: Any) -> None:
        self.state = state  # kept so the id the cache is keyed by stays this state's
        eventless: list[Any] = []
        evented: list[tuple[Any, tuple[_Descriptor, ...]]] = []
        for source in (state, *state.ancestors()):
            for transition in source.transitions:
                if transition.initial:
                    continue
                if transition.is_eventless:
                    eventless.append(transition)
                else:
                    descriptors = tuple(_descriptor(str(d)) for d in transition.events)
                    evented.append((transition, descriptors))
        self.eventless: tuple[Any, ...] = tuple(eventless)
        self.evented: _Candidates = tuple(evented)


_candidates: dict[int, _StateCandidates] = {}
# The transitions that activate a machine, by machine class and start values (the library
# builds a new empty source state and new transitions for every activation).
_initial: dict[tuple[type, tuple[Any, ...]], list[Any]] = {}


def _of(state: Any) -> _StateCandidates:
    found = _candidates.get(id(state))
    if found is None or found.state is not state:
        found = _candidates[id(state)] = _StateCandidates(state)
    return found


_Plans = dict[tuple[int, ...], Any]
_has_history: dict[type, bool] = {}


def _plans_of(sm: Any) -> _Plans | None:
    """The machine's exit and entry plans; None for a chart with history states, whose entry
    also depends on the history recorded."""
    kind = type(sm)
    history = _has_history.get(kind)
    if history is None:
        history = _has_history[kind] = any(s.history for s in sm.states_map.values())
    if history:
        return None
    plans: _Plans = sm.__dict__.setdefault("_kernel_plans", {})
    return plans


class _EngineView:
    """What `InvokeManager` reads of its engine, without pointing back at the engine."""

    __slots__ = ("_debug", "_log_id", "sm")

    def __init__(self, sm: Any, debug: Callable[..., None], log_id: str) -> None:
        self.sm = sm
        self._debug = debug
        self._log_id = log_id


class _InvokeManager(InvokeManager):
    @staticmethod
    def _resolve_handler(underlying: Any) -> Any:
        # An invoke named by a string (the kernel's `on_invoke_<state>` methods) is a plain
        # callable: the library's answer too, but only after a runtime Protocol check that costs
        # more than the rest of spawning the invoke.
        if isinstance(underlying, str):
            return None
        return InvokeManager._resolve_handler(underlying)


class KernelEngine(AsyncEngine):
    def __init__(self, sm: Any) -> None:
        super().__init__(sm)
        # The library's invoke manager points back at its engine, which made every engine let
        # go of (one per reused tool machine per call) a cycle, with its queues and locks, left
        # to the garbage collector. The manager reads only these three things of its engine.
        view = _EngineView(sm, self._debug, self._log_id)
        self._invoke_manager = _InvokeManager(view)  # type: ignore[arg-type]
        # No kernel machine has `prepare_event` callbacks or validators: their lookups, an
        # awaited call each, are skipped unless some are registered.
        self._prepares = sm.prepare.key in sm._callbacks
        self._plans = _plans_of(sm)

    async def _get_args_kwargs(
        self, transition: Any, trigger_data: Any, target: Any = None, source: Any = None
    ) -> Any:
        if self._prepares:
            return await super()._get_args_kwargs(transition, trigger_data, target, source)
        key = (id(transition), id(trigger_data), id(target), id(source))
        found = self._cache.get(key)
        if found is None:
            event_data = EventData(trigger_data=trigger_data, transition=transition)
            if target:
                event_data.state = event_data.target = target
            if source:
                event_data.state = event_data.source = source
            found = self._cache[key] = (event_data.args, event_data.extended_kwargs)
        return found

    async def _conditions_match(self, transition: Any, trigger_data: Any) -> bool:
        args, kwargs = await self._get_args_kwargs(transition, trigger_data)
        registry = self.sm._callbacks
        if transition.validators.key in registry:
            await registry.async_call(transition.validators.key, *args, on_error=None, **kwargs)
        if transition.cond.key not in registry:
            return True
        matched: bool = await registry.async_all(
            transition.cond.key, *args, on_error=self._on_error_handler(), **kwargs
        )
        return matched

    def _prepare_exit_states(self, enabled_transitions: list[Any]) -> Any:
        plans = self._plans
        if plans is None:
            return super()._prepare_exit_states(enabled_transitions)
        # 0 separates the transitions from the configuration (no object has id 0).
        key = (*map(id, enabled_transitions), 0, *map(id, self.sm.configuration))
        plan = plans.get(key)
        if plan is None:
            plan = plans[key] = super()._prepare_exit_states(enabled_transitions)
        ordered, exited = plan
        return list(ordered), exited

    def _prepare_entry_states(
        self, enabled_transitions: list[Any], states_to_exit: Any, previous_configuration: Any
    ) -> Any:
        plans = self._plans
        if plans is None:
            return super()._prepare_entry_states(
                enabled_transitions, states_to_exit, previous_configuration
            )
        key = (
            *map(id, enabled_transitions),
            0,
            *map(id, previous_configuration),
            0,
            *map(id, states_to_exit),
        )
        plan = plans.get(key)
        if plan is None:
            plan = plans[key] = super()._prepare_entry_states(
                enabled_transitions, states_to_exit, previous_configuration
            )
        ordered, default_entry, history_content, configuration = plan
        # The new configuration reaches callbacks as an argument: each gets its own copy.
        return list(ordered), default_entry, history_content, OrderedSet(configuration)

    def _initial_transitions(self, trigger_data: Any) -> list[Any]:
        key = (type(self.sm), tuple(self.sm.start_configuration_values))
        found = _initial.get(key)
        if found is None:
            built: list[Any] = super()._initial_transitions(trigger_data)  # type: ignore[no-untyped-call]
            found = _initial[key] = built
        return list(found)

    async def select_eventless_transitions(self, trigger_data: Any) -> Any:
        enabled: OrderedSet[Any] = OrderedSet()
        for state in self.sm.configuration:
            if not state.is_atomic:
                continue
            for transition in _of(state).eventless:
                if await self._conditions_match(transition, trigger_data):
                    enabled.add(transition)
                    break
        return self._filtered(enabled)

    async def select_transitions(self, trigger_data: Any) -> Any:
        event = str(trigger_data.event)
        enabled: OrderedSet[Any] = OrderedSet()
        for state in self.sm.configuration:
            if not state.is_atomic:
                continue
            for transition, descriptors in _of(state).evented:
                if _matches(descriptors, event) and await self._conditions_match(
                    transition, trigger_data
                ):
                    enabled.add(transition)
                    break
        return self._filtered(enabled)

    async def _execute_transition_content(
        self,
        enabled_transitions: list[Any],
        trigger_data: Any,
        get_key: Callable[[Any], str],
        set_target_as_state: bool = False,
        **kwargs_extra: Any,
    ) -> list[Any]:
        registry = self.sm._callbacks
        result: list[Any] = []
        for transition in enabled_transitions:
            key = get_key(transition)
            if key not in registry:
                continue  # nothing to call: no arguments to build
            target = transition.target if set_target_as_state else None
            args, kwargs = await self._get_args_kwargs(transition, trigger_data, target=target)
            kwargs.update(kwargs_extra)
            on_error = kwargs.pop("on_error", None)
            for callback in registry[key]:
                if not callback.condition(*args, **kwargs):
                    continue
                if on_error is None:
                    result.append(await callback(*args, **kwargs))
                    continue
                try:
                    result.append(await callback(*args, **kwargs))
                except Exception as error:
                    on_error(error)
        return result

    def _filtered(self, enabled: OrderedSet[Any]) -> Any:
        # One transition conflicts with nothing: the library's filter would return it as is.
        return enabled if len(enabled) < 2 else self._filter_conflicting_transitions(enabled)


@dataclass
class StepCounts:
    """What the machines built inside `count_steps()` did, summed over all of them."""

    events: int = 0  # events taken: external ones, internal ones and invokes' completions
    microsteps: int = 0  # sets of transitions taken, targetless ones included


class _CountingEngine(KernelEngine):
    def __init__(self, sm: Any, counts: StepCounts) -> None:
        super().__init__(sm)
        self._counts = counts

    async def select_transitions(self, trigger_data: Any) -> Any:
        self._counts.events += 1  # the library selects once per event it takes
        return await super().select_transitions(trigger_data)

    async def microstep(self, transitions: list[Any], trigger_data: Any) -> Any:
        self._counts.microsteps += 1
        return await super().microstep(transitions, trigger_data)


_counts: StepCounts | None = None


@contextmanager
def count_steps() -> Iterator[StepCounts]:
    """Machines built inside run on the kernel's engine and count into the value yielded."""
    global _counts
    previous, _counts = _counts, StepCounts()
    try:
        yield _counts
    finally:
        _counts = previous


EngineKind = Literal["kernel", "stock"]
ENGINE_ENV = "TUI_AGENT_KERNEL_ENGINE"
_engine_kind: EngineKind = "stock" if os.environ.get(ENGINE_ENV) == "stock" else "kernel"


@contextmanager
def use_engine(kind: EngineKind) -> Iterator[None]:
    """Machines built inside run on `kind`: ours, or the library's stock `AsyncEngine`."""
    global _engine_kind
    previous, _engine_kind = _engine_kind, kind
    try:
        yield
    finally:
        _engine_kind = previous


def engine_kind() -> EngineKind:
    return _engine_kind


class EngineChart(StateChart[Any]):
    """A `StateChart` on the kernel's engine (or the stock one), which can start over."""

    def _get_engine(self) -> AsyncEngine:
        # Every kernel machine has async callbacks, so the library would pick its async engine.
        if _counts is not None:
            return _CountingEngine(self, _counts)
        return KernelEngine(self) if _engine_kind == "kernel" else AsyncEngine(self)

    def restart(self) -> None:
        """Back to before activation, keeping the callback table built for this instance (the
        expensive part of construction). The previous run's engine is dropped: its invokes were
        cancelled when it reached a final state, so nothing of it can reach the new run."""
        setattr(self.model, self.state_field, None)
        self.history_values.clear()
        # Stopping forgets the invocations it still lists: the last one's task refers back to
        # the engine (through its context), a cycle only the garbage collector would break.
        self._engine.stop()
        self._engine = self._get_engine()
        self._engine.start()
