"""python-statemachine's private surface, fenced: the kernel's engine and its chart base.

One piece (915 lines): `scripts/check_fences.py` allows the library's private names in this one
module only, and the engine's parts (selection, plans, callers) share them. Nothing else in
`tui_agent` touches a private name or a non-public module of python-statemachine (the script
enforces it); the canaries in `tests/kernel/test_statemachine_canaries.py` check every name
below against the installed library, and `tests/kernel/test_engine_differential.py` runs the
three machines under this engine and under the library's own on the same generated inputs.

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
configuration (no kernel machine has history states): the plans are kept per machine, keyed by
both, instead of computed again on every microstep (a tool machine takes the same two microsteps
for every call; a turn the same few for every step). A plan holds the machine's own state
objects, so it is never shared between machines; it is kept with the machine, so it outlives an
engine replaced for a reused tool machine's next call. Besides the states, a plan holds what the
library works out again for each state it enters or leaves: whether it has invokes, whether it
is final, the initial transition it is entered by default through, and the model's state value
after it. The microstep (`microstep`, `_exit_states`, `_enter_states`, re-implemented in the
library's order) then builds a callback's arguments only when the state has callbacks (a machine
with `prepare_event` callbacks, whose arguments have effects, takes the library's way), and
writes the configuration to the model only before a callback that could read it and at the end
(the library copies and writes it once per state entered or left; nothing runs in between). The
library's debug log lines for a microstep are not written.

Callbacks are called through `_Caller`s, one per registered callback, kept per machine: the
library's signature adapter binds every call's arguments to the callback's parameters anew;
a caller asks the library's binding once per set of argument names which names the callback
takes, then calls the method with those (see `_Caller`).

Smaller things: no kernel machine registers `prepare_event` callbacks or validators, so their
lookups are skipped; an invoke named by a method skips a runtime Protocol check; and the invoke
manager no longer points back at its engine, so an engine let go of is freed at once. A reused
tool machine renews its engine for the next call (`KernelEngine.renew`: fresh queues, counters
and invoke manager, as a new engine has) instead of building one.

`TUI_AGENT_KERNEL_ENGINE=stock` (or `use_engine("stock")`) runs the machines on the library's
own `AsyncEngine` instead: the reference the differential test and the benchmark compare with.
Inside `count_steps()`, machines built run on a subclass of the kernel's engine that counts the
events it takes and the microsteps it runs (for the benchmark and the tests that prove a step's
cost; the product never pays for the counting).

Private names and non-public modules touched (name: why):
- `statemachine.engines.async_`: `AsyncEngine`, the base of `KernelEngine` and the stock engine.
- `statemachine.engines.base`: `EventQueue`, subclassed to put without notifying waiters.
- `statemachine.event_data`: `EventData`, built to give callbacks the library's arguments;
  `TriggerData`, the null trigger an eventless selection runs with.
- `statemachine.invoke`: `InvokeManager`, subclassed to skip the Protocol check; `InvokeContext`,
  built for a method's invocation.
- `statemachine.orderedset`: `OrderedSet`, the set type the engine's selection returns.
- `statemachine.callbacks`: `allways_true`, the condition of a callback registered without one.
- `CallbackWrapper._callback`: the signature adapter; its closure's `a_callable` and
  `sig_bind_expected` are the method a caller calls and the binding it asks once.
- `CallbackWrapper._iscoro`: whether the callback is a coroutine function (awaited).
- `StateChart._get_engine`: overridden to choose our engine or the stock one.
- `StateChart._engine`: replaced by `EngineChart.restart` when a tool machine is reused.
- `StateChart._callbacks`: the callback registry, asked which keys have callbacks and called.
- `BaseEngine._cache`: the per-macrostep argument cache `_get_args_kwargs` fills.
- `BaseEngine._debug`: read for the invoke manager's view of the engine.
- `BaseEngine._log_id`: read for the invoke manager's view of the engine.
- `BaseEngine._invoke_manager`: replaced by one bound to that view, not to the engine.
- `BaseEngine._initial_transitions`: overridden to build activation transitions once.
- `BaseEngine._filter_conflicting_transitions`: called when two or more are enabled.
- `BaseEngine._prepare_exit_states`: called to build a machine's exit plans.
- `BaseEngine._prepare_entry_states`: called to build a machine's entry plans.
- `BaseEngine._on_error_handler`: the error handler guards and callbacks are run with.
- `BaseEngine._handle_final_state`: called when a final state is entered, as the library does.
- `BaseEngine._handle_error`: called when a microstep's callback fails, as the library does.
- `BaseEngine._microstep_count`: counted by the re-implemented microstep (the library's logs);
  reset with the other per-run fields below when an engine is renewed for a machine's new life.
- `BaseEngine._macrostep_count`: reset when an engine is renewed.
- `BaseEngine._root_parallel_final_pending`: reset when an engine is renewed.
- `BaseEngine._processing`: the processing lock; an engine holding it is not renewed.
- `AsyncEngine._lock_waiters`: callers waiting for the lock; an engine with any is not renewed.
- `BaseEngine.__init__`: what a renewed engine resets must be every per-run field it sets.
- `BaseEngine._sentinel`: the "no transition" result of an external event, as the library's.
- `StateChart._config`: the configuration whose cache a plan's write invalidates.
- `Configuration._invalidate`: called before a plan writes the model's state value.
- `AsyncEngine._run_processing_loop`: overridden (the library's, minus its context manager and
  debug lines).
- `statemachine.engines.async_._MacrostepCaller`: the loop's answer to an event's caller.
- `statemachine.engines.base._running_engine`: the context variable the loop sets and resets.
- `BaseEngine._check_root_final_state`: called by the loop, as the library's calls it.
- `BaseEngine._drop_external_events`: called by the loop, as the library's calls it.
- `AsyncEngine._reject_pending_futures`: called by the loop, as the library's calls it.
- `AsyncEngine._resolve_future`: called by the loop, as the library's calls it.
- `AsyncEngine._run_macrostep`: overridden (the library's, minus its debug line).
- `AsyncEngine._take_due_external_event`: overridden (the library's, minus its debug lines).
- `AsyncEngine._take_external_event`: called, as the library's loop does.
- `InvokeManager._pending`: read: nothing pending means nothing to spawn.
- `InvokeManager._make_context`: overridden to number a method's invocations.
- `re-implemented sources`: the library's methods the engine re-implements (`microstep`,
  `_exit_states`, `_enter_states`, `_run_macrostep`, `_take_due_external_event`,
  `_execute_transition_content`, `_conditions_match`, `spawn_pending_async`, `_make_context`,
  `EventQueue.put`, `_run_processing_loop`):
  a canary fails when one changes, so the copy here is compared with the new version first.
- `AsyncEngine._exit_states`: overridden to run a machine's exit plans.
- `AsyncEngine._enter_states`: overridden to run a machine's entry plans.
- `AsyncEngine._get_args_kwargs`: overridden to skip `prepare` lookups; called by the library.
- `AsyncEngine._conditions_match`: overridden to skip validator lookups.
- `AsyncEngine._execute_transition_content`: overridden to run content in order.
- `InvokeManager._resolve_handler`: overridden to skip the Protocol check for method names.
- `InvokeManager._engine`: what the manager reads through it must be only `sm`, `_debug` and
  `_log_id`, the three things `_EngineView` offers.
Public but undocumented names this module relies on too: `select_transitions`,
`select_eventless_transitions` and `microstep` (re-implemented), `StateChart.history_values`,
the model's state field and `start_configuration_values` (reset by `restart`),
`StateChart.current_state_value` (written by the plans), `Transition.initial`, `.is_eventless`,
`.events`, `.cond.key`, `.validators.key`, `.before.key`, `.on.key`, `.after.key`,
`State.enter.key`, `.exit.key`, `.invoke.key`, `StateChart.prepare.key`, `EventData.args` and
`.extended_kwargs`, `CallbackWrapper.condition` and `.expected_value`, and the `StateTransition`
records (`.state`, `.transition`) the library's exit and entry computations return.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from heapq import heappush
from inspect import Parameter, isawaitable
from itertools import count
from time import monotonic
from typing import Any, Literal

from statemachine import StateChart
from statemachine.callbacks import allways_true
from statemachine.engines.async_ import AsyncEngine, _MacrostepCaller
from statemachine.engines.base import EventQueue, _running_engine
from statemachine.event_data import EventData, TriggerData
from statemachine.exceptions import InvalidDefinition
from statemachine.invoke import InvokeContext, InvokeManager
from statemachine.orderedset import OrderedSet

from tui_agent.lazy_dataclass import dataclass

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


_PLAIN_KINDS = (Parameter.POSITIONAL_OR_KEYWORD, Parameter.KEYWORD_ONLY)


class _Caller:
    """One registered callback, called the way the library calls it, minus its per-call binding.

    The library wraps each callback in a signature adapter that binds the call's arguments to
    the callback's parameters on every call (a template lookup, then `BoundArguments` and its
    `args` and `kwargs`: about fifteen Python calls). Here the names a callback takes are worked
    out once per set of keyword names, by the library's own binding, and the method is called
    with exactly those. A call with positional arguments, or a callback that is not a plain
    method of named parameters, goes through the library's adapter as before."""

    __slots__ = ("_bind", "_names", "adapter", "condition", "coroutine", "expected", "method")

    def __init__(self, wrapper: Any) -> None:
        adapter = wrapper._callback
        self.adapter = adapter
        self.condition = None if wrapper.condition is allways_true else wrapper.condition
        self.expected = wrapper.expected_value
        self.coroutine: bool = wrapper._iscoro
        # The adapter's closure holds the callable and its signature's `bind_expected`.
        code = getattr(adapter, "__code__", None)
        closure = getattr(adapter, "__closure__", None) or ()
        names = code.co_freevars if code is not None else ()
        cells = dict(zip(names, (cell.cell_contents for cell in closure), strict=False))
        method, bind = cells.get("a_callable"), cells.get("sig_bind_expected")
        signature = getattr(bind, "__self__", None)
        plain = signature is not None and all(
            parameter.kind in _PLAIN_KINDS for parameter in signature.parameters.values()
        )
        self.method = method if plain and callable(method) else None
        self._bind: Any = bind
        self._names: dict[frozenset[str], tuple[str, ...]] = {}

    def start(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The callback's return value (an awaitable for a coroutine callback)."""
        method = self.method
        if args or method is None:
            return self.adapter(*args, **kwargs)
        keys = frozenset(kwargs)
        names = self._names.get(keys)
        if names is None:
            names = self._names[keys] = tuple(self._bind(**kwargs).arguments)
        return method(**{name: kwargs[name] for name in names})


def _maybe_awaitable(value: Any) -> bool:
    # What a plain callback returns: mostly None or a guard's bool, never awaitable.
    return value is not None and type(value) is not bool and isawaitable(value)


async def _call_each(
    callers: tuple[_Caller, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    on_error: Callable[[Exception], None] | None,
) -> list[Any]:
    """The library's `async_call` of one callback group, in order."""
    results: list[Any] = []
    for caller in callers:
        condition = caller.condition
        if condition is not None and not condition(*args, **kwargs):
            continue
        try:
            value = caller.start(args, kwargs)
            if caller.coroutine or _maybe_awaitable(value):
                value = await value
        except Exception as error:
            if on_error is None:
                raise
            on_error(error)
            continue
        results.append(value if caller.expected is None else bool(value) == caller.expected)
    return results


async def _call_all(
    callers: tuple[_Caller, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    on_error: Callable[[Exception], None] | None,
) -> bool:
    """The library's `async_all` of one group of guards."""
    for caller in callers:
        try:
            value = caller.start(args, kwargs)
            if caller.coroutine or _maybe_awaitable(value):
                value = await value
            if caller.expected is not None:
                value = bool(value) == caller.expected
            if not value:
                return False
        except Exception as error:
            if on_error is None:
                raise
            on_error(error)
            return False
    return True


_Callers = dict[str, tuple[_Caller, ...]]


def _callers_of(sm: Any) -> _Callers:
    callers: _Callers = sm.__dict__.setdefault("_kernel_callers", {})
    return callers


_NOTHING = object()  # no configuration write pending


def _raw(values: OrderedSet[Any]) -> Any:
    """The model's state value for a set of state values (as the library stores it)."""
    if not values:
        return None
    if len(values) == 1:
        return next(iter(values))
    return values


@dataclass(frozen=True, slots=True)
class _ExitStep:
    info: Any  # the library's StateTransition: the state and the transition leaving it
    invokes: bool  # the state has invokes to cancel
    raw_after: Any  # the model's state value once this state is left


@dataclass(frozen=True, slots=True)
class _ExitPlan:
    steps: tuple[_ExitStep, ...]
    exited: OrderedSet[Any]  # the states left, as the library's exit returns them


@dataclass(frozen=True, slots=True)
class _EntryStep:
    info: Any
    raw_after: Any  # the model's state value once this state is entered
    default_on: str | None  # the key of its initial transition's `on`, entered by default
    invokes: bool
    final: bool


@dataclass(frozen=True, slots=True)
class _EntryPlan:
    steps: tuple[_EntryStep, ...]
    configuration: OrderedSet[Any]  # the new configuration (states)


class _EngineView:
    """What `InvokeManager` reads of its engine, without pointing back at the engine."""

    __slots__ = ("_debug", "_log_id", "sm")

    def __init__(self, sm: Any, debug: Callable[..., None], log_id: str) -> None:
        self.sm = sm
        self._debug = debug
        self._log_id = log_id


class _EventQueue(EventQueue):
    """The library's event queue, put to without waking waiters: the engine never blocks on
    it (it pops without blocking, under the queue's lock), so the condition's notify and the
    unfinished-task count a `queue.PriorityQueue.put` also pays for are skipped."""

    def put(self, trigger_data: Any) -> None:
        queue: Any = self.queue
        with queue.mutex:
            heappush(queue.queue, trigger_data)


_invoke_numbers = count(1)


class _InvokeManager(InvokeManager):
    async def spawn_pending_async(self) -> None:
        # After most macrosteps nothing waits to be spawned: the library would still sort the
        # empty list and rebuild the table of active invocations. Ended and cancelled ones
        # (which no kernel invoke, a method, can be reached through) go at the next spawn or
        # when the machine stops.
        if self._pending:
            await super().spawn_pending_async()  # type: ignore[no-untyped-call]

    def _make_context(
        self, state: Any, event_kwargs: dict[str, Any] | None = None, handler: Any = None
    ) -> InvokeContext:
        if handler is not None:
            return super()._make_context(state, event_kwargs, handler)
        # A method's invocation is named by a number unique in this process instead of eight
        # hex digits of a random UUID (a system call and a UUID object per invoke).
        return InvokeContext(
            invokeid=f"{state.id}.{next(_invoke_numbers):08x}",
            state_id=state.id,
            send=self.sm.send,
            machine=self.sm,
            kwargs=event_kwargs or {},
        )

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
        self.external_queue = _EventQueue()  # type: ignore[no-untyped-call]
        self.internal_queue = _EventQueue()  # type: ignore[no-untyped-call]
        # The library's invoke manager points back at its engine, which made every engine let
        # go of (one per reused tool machine per call) a cycle, with its queues and locks, left
        # to the garbage collector. The manager reads only these three things of its engine.
        self._view = _EngineView(sm, self._debug, self._log_id)
        self._invoke_manager = _InvokeManager(self._view)  # type: ignore[arg-type]
        # No kernel machine has `prepare_event` callbacks or validators: their lookups, an
        # awaited call each, are skipped unless some are registered.
        self._prepares = sm.prepare.key in sm._callbacks
        self._plans = _plans_of(sm)
        self._callers = _callers_of(sm)

    def renew(self) -> bool:
        """Made ready for another run of its machine, as a new engine would start (fresh
        queues, counters and invoke manager); False when it is not idle, and so is not."""
        if self._processing.locked() or self._lock_waiters:
            return False
        self.running = True
        self.clear()  # type: ignore[no-untyped-call]
        self._cache.clear()
        self._macrostep_count = self._microstep_count = 0
        self._root_parallel_final_pending = None
        self._invoke_manager = _InvokeManager(self._view)  # type: ignore[arg-type]
        return True

    def _group(self, key: str) -> tuple[_Caller, ...]:
        """The callbacks registered under `key`, as callers (none: an empty tuple)."""
        found = self._callers.get(key)
        if found is None:
            registry = self.sm._callbacks
            found = tuple(_Caller(w) for w in registry[key]) if key in registry else ()
            self._callers[key] = found
        return found

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
        validators = self._group(transition.validators.key)
        guards = self._group(transition.cond.key)
        if not validators and not guards and not self._prepares:
            return True  # nothing to run: no arguments to build
        args, kwargs = await self._get_args_kwargs(transition, trigger_data)
        if validators:
            await _call_each(validators, args, kwargs, None)
        return await _call_all(guards, args, kwargs, self._on_error_handler())

    def _write(self, raw: Any) -> None:
        # What the library's configuration writes to the model, without checking the value
        # again (a plan's values are the machine's own). A set of several values is copied: the
        # plan keeps its own, the model gets a fresh one (as the library's copy-on-write gives).
        sm = self.sm
        sm._config._invalidate()  # type: ignore[no-untyped-call]
        setattr(sm.model, sm.state_field, OrderedSet(raw) if type(raw) is OrderedSet else raw)

    def _exit_plan(self, enabled_transitions: list[Any], plans: _Plans) -> _ExitPlan:
        sm = self.sm
        # 0 separates the transitions from the configuration (no object has id 0).
        key = (*map(id, enabled_transitions), 0, *map(id, sm.configuration))
        plan: _ExitPlan | None = plans.get(key)
        if plan is None:
            ordered, exited = super()._prepare_exit_states(enabled_transitions)
            values = OrderedSet(sm.configuration_values)
            registry = sm._callbacks
            steps = []
            for info in ordered:
                values.discard(info.state.value)
                invokes = info.state.invoke.key in registry
                steps.append(_ExitStep(info, invokes, _raw(OrderedSet(values))))
            plan = plans[key] = _ExitPlan(tuple(steps), exited)
        return plan

    def _entry_plan(
        self,
        enabled_transitions: list[Any],
        states_to_exit: Any,
        previous_configuration: Any,
        plans: _Plans,
    ) -> _EntryPlan:
        key = (
            *map(id, enabled_transitions),
            0,
            *map(id, previous_configuration),
            0,
            *map(id, states_to_exit),
        )
        plan: _EntryPlan | None = plans.get(key)
        if plan is None:
            ordered, default_entry, _history, configuration = super()._prepare_entry_states(
                enabled_transitions, states_to_exit, previous_configuration
            )
            sm = self.sm
            registry = sm._callbacks
            defaults = {info.state.id for info in default_entry if info.state}
            values = OrderedSet(sm.configuration_values)
            steps = []
            for info in ordered:
                target = info.state
                values.add(target.value)
                default_on = None
                if target.id in defaults:
                    initial = [t for t in target.transitions if t.initial]
                    if len(initial) == 1:
                        default_on = initial[0].on.key
                invokes = target.invoke.key in registry
                raw = _raw(OrderedSet(values))
                steps.append(_EntryStep(info, raw, default_on, invokes, bool(target.final)))
            plan = plans[key] = _EntryPlan(tuple(steps), configuration)
        return plan

    async def _exit_states(self, enabled_transitions: list[Any], trigger_data: Any) -> Any:
        plans = self._plans
        if plans is None or self._prepares or self.sm.atomic_configuration_update:
            return await super()._exit_states(enabled_transitions, trigger_data)
        plan = self._exit_plan(enabled_transitions, plans)
        on_error = self._on_error_handler()
        pending = _NOTHING
        for step in plan.steps:
            info = step.info
            if step.invokes:
                self._invoke_manager.cancel_for_state(info.state)
            callers = self._group(info.state.exit.key)
            if callers:
                if pending is not _NOTHING:
                    self._write(pending)  # the callback sees the states left so far
                    pending = _NOTHING
                args, kwargs = await self._get_args_kwargs(
                    info.transition, trigger_data, source=info.state
                )
                await _call_each(callers, args, kwargs, on_error)
            pending = step.raw_after
        if pending is not _NOTHING:
            self._write(pending)
        return plan.exited

    async def _enter_states(
        self,
        enabled_transitions: list[Any],
        trigger_data: Any,
        states_to_exit: Any,
        previous_configuration: Any,
    ) -> Any:
        plans = self._plans
        if plans is None or self._prepares or self.sm.atomic_configuration_update:
            return await super()._enter_states(
                enabled_transitions, trigger_data, states_to_exit, previous_configuration
            )
        plan = self._entry_plan(enabled_transitions, states_to_exit, previous_configuration, plans)
        on_error = self._on_error_handler()
        # As the library: during `error.execution`, errors in transition content propagate.
        event = trigger_data.event
        on_error_transition = on_error
        if on_error is not None and event and str(event) == "error.execution":
            on_error_transition = None
        # The new configuration reaches callbacks as an argument: each call gets its own copy.
        result = await self._execute_transition_content(
            enabled_transitions,
            trigger_data,
            _on_key,
            on_error=on_error_transition,
            previous_configuration=previous_configuration,
            new_configuration=OrderedSet(plan.configuration),
        )
        pending = _NOTHING
        for step in plan.steps:
            target = step.info.state
            pending = step.raw_after
            callers = self._group(target.enter.key)
            entered: list[Any] = []
            if callers or step.default_on is not None:
                self._write(pending)  # the callback sees the states entered so far
                pending = _NOTHING
                args, kwargs = await self._get_args_kwargs(
                    step.info.transition, trigger_data, target=target
                )
                if callers:
                    entered = await _call_each(callers, args, kwargs, on_error)
                if step.default_on is not None:
                    result += await _call_each(self._group(step.default_on), args, kwargs, None)
            if step.invokes:
                self._invoke_manager.mark_for_invoke(target, trigger_data.kwargs)
            if step.final:
                if pending is not _NOTHING:
                    self._write(pending)
                    pending = _NOTHING
                self._handle_final_state(target, entered)
        if pending is not _NOTHING:
            self._write(pending)
        return result

    async def _run_processing_loop(self, caller_future: Any) -> Any:
        # The library's loop, with the running engine set and reset directly instead of through
        # a context manager, and without its debug lines and its method call per cache clear.
        first_result = self._sentinel
        macrostep: Any = _MacrostepCaller()  # type: ignore[no-untyped-call]
        try:
            token = _running_engine.set(self)
            try:
                took_events = True
                while took_events and self.running:
                    self._cache.clear()
                    took_events = await self._run_macrostep()
                    # Spawn invoke handlers for states entered during this macrostep.
                    await self._invoke_manager.spawn_pending_async()  # type: ignore[no-untyped-call]
                    macrostep.answer()
                    self._check_root_final_state()  # type: ignore[no-untyped-call]
                    if not self.running:
                        break
                    took_external, first_result = await self._take_due_external_event(
                        first_result, macrostep
                    )
                    took_events = took_events or took_external
                macrostep.answer()
                if not self.running:
                    self._drop_external_events()  # type: ignore[no-untyped-call]
            finally:
                _running_engine.reset(token)
        except Exception as error:
            answered = caller_future is None or caller_future.done()
            self._reject_pending_futures(error)
            self.clear()  # type: ignore[no-untyped-call]
            if not macrostep.reject(error) and answered:
                raise
        except BaseException:
            self.internal_queue.clear()  # type: ignore[no-untyped-call]
            macrostep.interrupt()
            if caller_future is not None:
                caller_future.cancel()
            raise
        result = first_result if first_result is not self._sentinel else None
        if caller_future is not None:
            self._resolve_future(caller_future, result)
            return await caller_future
        return result

    async def _run_macrostep(self) -> bool:
        # The library's macrostep without its debug log line and its method call per cache clear.
        took_events = False
        internal = self.internal_queue
        while True:
            self._microstep_count = 0
            self._cache.clear()
            trigger = TriggerData(self.sm, event=None)  # null object for eventless
            enabled = await self.select_eventless_transitions(trigger)
            if not enabled:
                if internal.is_empty():  # type: ignore[no-untyped-call]
                    return took_events
                trigger = internal.pop()  # type: ignore[no-untyped-call]
                enabled = await self.select_transitions(trigger)
            if enabled:
                took_events = True
                await self.microstep(list(enabled), trigger)

    async def _take_due_external_event(self, first_result: Any, macrostep: Any) -> Any:
        # The library's, without its two debug log lines and its method call per cache clear.
        queue = self.external_queue
        if queue.is_empty():  # type: ignore[no-untyped-call]
            return False, first_result
        self._cache.clear()
        external_event = queue.pop_due(monotonic())
        if external_event is None:  # not due yet: the library's wait
            return await super()._take_due_external_event(first_result, macrostep)
        self._macrostep_count += 1
        self._microstep_count = 0
        if external_event.event == "__initial__":
            transitions = self._initial_transitions(external_event)
            await self._enter_states(transitions, external_event, OrderedSet(), OrderedSet())
            return True, first_result
        macrostep.future = external_event.future
        result = await self._take_external_event(external_event)
        if result is not self._sentinel:
            macrostep.result = result
        if first_result is self._sentinel:
            first_result = result
        return True, first_result

    async def microstep(self, transitions: list[Any], trigger_data: Any) -> Any:
        if self._plans is None:
            return await super().microstep(transitions, trigger_data)
        # The library's microstep without its debug log line.
        self._microstep_count += 1
        sm = self.sm
        previous_configuration = sm.configuration
        try:
            result = await self._execute_transition_content(transitions, trigger_data, _before_key)
            states_to_exit = await self._exit_states(transitions, trigger_data)
            result += await self._enter_states(
                transitions, trigger_data, states_to_exit, previous_configuration
            )
        except InvalidDefinition:
            sm.configuration = previous_configuration
            raise
        except Exception as error:
            sm.configuration = previous_configuration
            self._handle_error(error, trigger_data)
            return None
        try:
            await self._execute_transition_content(
                transitions, trigger_data, _after_key, set_target_as_state=True
            )
        except InvalidDefinition:
            raise
        except Exception as error:
            self._handle_error(error, trigger_data)
        if not result:
            return None
        return result[0] if len(result) == 1 else result

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
        result: list[Any] = []
        for transition in enabled_transitions:
            callers = self._group(get_key(transition))
            if not callers:
                continue  # nothing to call: no arguments to build
            target = transition.target if set_target_as_state else None
            args, kwargs = await self._get_args_kwargs(transition, trigger_data, target=target)
            kwargs.update(kwargs_extra)
            on_error = kwargs.pop("on_error", None)
            result += await _call_each(callers, args, kwargs, on_error)
        return result

    def _filtered(self, enabled: OrderedSet[Any]) -> Any:
        # One transition conflicts with nothing: the library's filter would return it as is.
        return enabled if len(enabled) < 2 else self._filter_conflicting_transitions(enabled)


def _before_key(transition: Any) -> Any:
    return transition.before.key


def _on_key(transition: Any) -> Any:
    return transition.on.key


def _after_key(transition: Any) -> Any:
    return transition.after.key


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
        engine = self._engine
        engine.stop()
        # The kernel's engine is renewed rather than replaced (a new one builds two priority
        # queues with their locks and conditions, an invoke manager and its view: a fifth of
        # a tool call's life); the stock one and a counting one are replaced, as before.
        reused = type(engine) is KernelEngine and _counts is None and _engine_kind == "kernel"
        if not (reused and engine.renew()):
            self._engine = self._get_engine()
        self._engine.start()
