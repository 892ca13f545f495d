"""Canaries: every private name of python-statemachine the fence touches still has the shape the
fence relies on. A failure names the name and what of the fence depends on it (the fence's
header, `tui_agent/kernel/_statemachine_engine.py`, is the list checked here)."""

from __future__ import annotations

import ast
import hashlib
import importlib
import inspect
import re
import textwrap
from collections.abc import Callable
from contextvars import ContextVar
from queue import PriorityQueue
from typing import Any

import pytest
import statemachine
from statemachine import State, StateChart

from tui_agent.kernel import _statemachine_engine as fence


def header_names() -> dict[str, str]:
    """The fence header's list: name -> why the fence touches it."""
    doc = fence.__doc__ or ""
    section = doc.split("Private names and non-public modules touched", 1)[1]
    section = section.split("Public but undocumented", 1)[0]
    entries = re.findall(r"^- `([^`]+)`: (.+?)(?=^- |\Z)", section, re.M | re.S)
    return {name: " ".join(why.split()) for name, why in entries}


class _Tiny(fence.EngineChart):
    """The smallest async chart on the fence's engine."""

    a = State(initial=True)
    b = State(final=True)
    go = a.to(b)

    async def on_go(self) -> None:
        pass


def _tiny() -> _Tiny:
    with fence.use_engine("kernel"):  # also when the suite runs on the stock engine
        return _Tiny()


def _engine_attrs() -> Any:
    return _tiny()._engine


def _params(function: Any) -> list[str]:
    return list(inspect.signature(function).parameters)


def _module(name: str, attribute: str) -> str | None:
    try:
        module = importlib.import_module(name)
    except ImportError:
        return "cannot be imported"
    return None if isinstance(getattr(module, attribute, None), type) else f"has no {attribute}"


def _method(owner: type, name: str, params: list[str], *, coroutine: bool) -> str | None:
    function = inspect.getattr_static(owner, name, None)
    if function is None:
        return "is gone"
    if isinstance(function, staticmethod):
        function = function.__func__
    if _params(function) != params:
        return f"takes {_params(function)}, the fence expects {params}"
    if inspect.iscoroutinefunction(function) != coroutine:
        return "is async" if not coroutine else "is no longer async"
    return None


def _attribute(of: Callable[[], Any], name: str, check: Callable[[Any], bool]) -> str | None:
    value = getattr(of(), name, None)
    return None if value is not None and check(value) else f"is missing or has changed: {value!r}"


def _invoke_manager_reads() -> str | None:
    """`_EngineView` offers the manager only `sm`, `_debug` and `_log_id` of its engine."""
    from statemachine.invoke import InvokeManager

    if _params(InvokeManager.__init__) != ["self", "engine"]:
        return f"InvokeManager.__init__ takes {_params(InvokeManager.__init__)}"
    tree = ast.parse(inspect.getsource(InvokeManager))
    read = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "_engine"
    }
    extra = read - {"sm", "_debug", "_log_id"}
    return f"the manager now reads {sorted(extra)} of its engine" if extra else None


def _always_true() -> str | None:
    try:
        module = importlib.import_module("statemachine.callbacks")
    except ImportError:
        return "cannot be imported"
    return None if callable(getattr(module, "allways_true", None)) else "has no allways_true"


def _go_callback() -> Any:
    """The registered wrapper of `_Tiny.on_go` (an async method taking no arguments)."""
    chart = _tiny()
    [transition] = [t for t in chart.a.transitions if not t.initial]
    [wrapper] = list(chart._callbacks[transition.on.key])
    return wrapper


def _adapter_closure() -> str | None:
    """A caller reads the method and its binding out of the signature adapter's closure."""
    adapter = _go_callback()._callback
    code = getattr(adapter, "__code__", None)
    names = set(code.co_freevars) if code is not None else set()
    missing = {"a_callable", "sig_bind_expected"} - names
    if missing:
        return f"the signature adapter's closure no longer holds {sorted(missing)}"
    caller = fence._Caller(_go_callback())
    if caller.method is None:
        return "a caller no longer finds a plain method behind the adapter"
    return None


# Every field the library's engines set in `__init__`: `KernelEngine.renew` resets the per-run
# ones (the queues, counters, lock state and invoke manager); the rest belong to the machine.
_ENGINE_FIELDS = {
    "BaseEngine": {
        *("_cache", "_debug", "_invoke_manager", "_log_id", "_macrostep_count"),
        *("_microstep_count", "_processing", "_root_parallel_final_pending", "_sentinel"),
        *("external_queue", "internal_queue", "running", "sm"),
    },
    "AsyncEngine": {"_lock_waiters"},
}


def _engine_fields() -> str | None:
    """A field the library adds to an engine would not be reset by `renew`."""
    from statemachine.engines.base import BaseEngine

    for owner in (BaseEngine, _engine_class()):
        tree = ast.parse(textwrap.dedent(inspect.getsource(owner.__init__)))  # type: ignore[misc]
        stored = {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and isinstance(node.ctx, ast.Store)
        }
        if stored != _ENGINE_FIELDS[owner.__name__]:
            return f"{owner.__name__}.__init__ now sets {sorted(stored)}"
    return None


# The library's methods the engine re-implements, by a digest of their source: a new version
# of one must be read and the engine's copy brought in line before the canary is updated.
_MIRRORED = {
    "AsyncEngine.microstep": "cf7fc03c2b2dce01",
    "AsyncEngine._exit_states": "29a0d88217ba0c0d",
    "AsyncEngine._enter_states": "8b5064102ccd5446",
    "AsyncEngine._run_macrostep": "51fe5641decc85c5",
    "AsyncEngine._take_due_external_event": "6e04c5ad75105352",
    "AsyncEngine._execute_transition_content": "3ed9736356de5505",
    "AsyncEngine._conditions_match": "739185cbf0c2b8b8",
    "InvokeManager.spawn_pending_async": "bd3badb6c564a9fa",
    "InvokeManager._make_context": "6247dbb7cb530059",
    "EventQueue.put": "03eb63331f50e4f3",
    "AsyncEngine._run_processing_loop": "7e0dd77b77fddbe8",
}


def _mirrored_sources() -> str | None:
    from statemachine.engines.base import EventQueue

    owners = {
        "AsyncEngine": _engine_class(),
        "InvokeManager": _invoke_manager(),
        "EventQueue": EventQueue,
    }
    changed = []
    for dotted, digest in _MIRRORED.items():
        owner, name = dotted.split(".")
        source = inspect.getsource(getattr(owners[owner], name))
        if hashlib.sha256(source.encode()).hexdigest()[:16] != digest:
            changed.append(dotted)
    return f"changed: {changed}" if changed else None


def _event_queue() -> str | None:
    """`_EventQueue` pushes onto the heap of the library's `PriorityQueue`, under its mutex."""
    problem = _module("statemachine.engines.base", "EventQueue")
    if problem is not None:
        return problem
    queue = _engine_attrs().external_queue.queue
    if not isinstance(queue, PriorityQueue) or not isinstance(queue.queue, list):
        return f"an event queue now holds {queue!r}"
    return None


def _macrostep_caller() -> str | None:
    """The loop answers an event's caller through one: `answer`, `reject`, `interrupt`."""
    found = getattr(
        importlib.import_module("statemachine.engines.async_"), "_MacrostepCaller", None
    )
    if not isinstance(found, type):
        return "is gone"
    caller = found()
    missing = [
        name
        for name in ("answer", "reject", "interrupt", "future", "result")
        if not hasattr(caller, name)
    ]
    return f"has no {missing}" if missing else None


def _engine_class() -> type:
    from statemachine.engines.async_ import AsyncEngine

    return AsyncEngine


def _invoke_manager() -> type:
    from statemachine.invoke import InvokeManager

    return InvokeManager


_CONTENT_PARAMS = [
    *("self", "enabled_transitions", "trigger_data", "get_key", "set_target_as_state"),
    "kwargs_extra",
]

CANARIES: dict[str, Callable[[], str | None]] = {
    "statemachine.engines.async_": lambda: _module("statemachine.engines.async_", "AsyncEngine"),
    "statemachine.engines.base": _event_queue,
    "statemachine.event_data": lambda: _module("statemachine.event_data", "EventData"),
    "statemachine.invoke": lambda: _module("statemachine.invoke", "InvokeManager"),
    "statemachine.orderedset": lambda: _module("statemachine.orderedset", "OrderedSet"),
    "statemachine.callbacks": _always_true,
    "CallbackWrapper._callback": _adapter_closure,
    "CallbackWrapper._iscoro": lambda: _attribute(_go_callback, "_iscoro", lambda v: v is True),
    "StateChart._get_engine": lambda: _method(StateChart, "_get_engine", ["self"], coroutine=False),
    "StateChart._engine": lambda: _attribute(
        _tiny, "_engine", lambda engine: isinstance(engine, fence.KernelEngine)
    ),
    "StateChart._callbacks": lambda: _attribute(
        _tiny,
        "_callbacks",
        lambda registry: all(
            hasattr(registry, name)
            for name in ("__contains__", "__getitem__", "async_call", "async_all")
        ),
    ),
    "BaseEngine._cache": lambda: _attribute(_engine_attrs, "_cache", lambda c: c == {}),
    "BaseEngine._debug": lambda: _attribute(_engine_attrs, "_debug", callable),
    "BaseEngine._log_id": lambda: _attribute(
        _engine_attrs, "_log_id", lambda i: isinstance(i, str)
    ),
    "BaseEngine._invoke_manager": lambda: _attribute(
        _engine_attrs, "_invoke_manager", lambda m: isinstance(m, _invoke_manager())
    ),
    "BaseEngine._initial_transitions": lambda: _method(
        _engine_class(), "_initial_transitions", ["self", "trigger_data"], coroutine=False
    ),
    "BaseEngine._filter_conflicting_transitions": lambda: _method(
        _engine_class(), "_filter_conflicting_transitions", ["self", "transitions"], coroutine=False
    ),
    "BaseEngine._prepare_exit_states": lambda: _method(
        _engine_class(), "_prepare_exit_states", ["self", "enabled_transitions"], coroutine=False
    ),
    "BaseEngine._prepare_entry_states": lambda: _method(
        _engine_class(),
        "_prepare_entry_states",
        ["self", "enabled_transitions", "states_to_exit", "previous_configuration"],
        coroutine=False,
    ),
    "BaseEngine._on_error_handler": lambda: _method(
        _engine_class(), "_on_error_handler", ["self"], coroutine=False
    ),
    "BaseEngine._handle_final_state": lambda: _method(
        _engine_class(),
        "_handle_final_state",
        ["self", "target", "on_entry_result"],
        coroutine=False,
    ),
    "BaseEngine._handle_error": lambda: _method(
        _engine_class(), "_handle_error", ["self", "error", "trigger_data"], coroutine=False
    ),
    "BaseEngine._microstep_count": lambda: _attribute(
        _engine_attrs, "_microstep_count", lambda n: isinstance(n, int)
    ),
    "BaseEngine._macrostep_count": lambda: _attribute(
        _engine_attrs, "_macrostep_count", lambda n: isinstance(n, int)
    ),
    "BaseEngine._root_parallel_final_pending": lambda: (
        None if hasattr(_engine_attrs(), "_root_parallel_final_pending") else "is missing"
    ),
    "BaseEngine._processing": lambda: _attribute(
        _engine_attrs, "_processing", lambda lock: callable(getattr(lock, "locked", None))
    ),
    "AsyncEngine._lock_waiters": lambda: _attribute(
        _engine_attrs, "_lock_waiters", lambda waiters: waiters == set()
    ),
    "BaseEngine.__init__": _engine_fields,
    "re-implemented sources": _mirrored_sources,
    "BaseEngine._sentinel": lambda: _attribute(
        _engine_attrs, "_sentinel", lambda v: type(v) is object
    ),
    "StateChart._config": lambda: _attribute(
        _tiny, "_config", lambda c: callable(getattr(c, "_invalidate", None))
    ),
    "Configuration._invalidate": lambda: _method(
        type(_tiny()._config), "_invalidate", ["self"], coroutine=False
    ),
    "AsyncEngine._run_processing_loop": lambda: _method(
        _engine_class(), "_run_processing_loop", ["self", "caller_future"], coroutine=True
    ),
    "statemachine.engines.async_._MacrostepCaller": _macrostep_caller,
    "statemachine.engines.base._running_engine": lambda: (
        None
        if isinstance(
            getattr(importlib.import_module("statemachine.engines.base"), "_running_engine", None),
            ContextVar,
        )
        else "is no longer a context variable"
    ),
    "BaseEngine._check_root_final_state": lambda: _method(
        _engine_class(), "_check_root_final_state", ["self"], coroutine=False
    ),
    "BaseEngine._drop_external_events": lambda: _method(
        _engine_class(), "_drop_external_events", ["self"], coroutine=False
    ),
    "AsyncEngine._reject_pending_futures": lambda: _method(
        _engine_class(), "_reject_pending_futures", ["self", "exc"], coroutine=False
    ),
    "AsyncEngine._resolve_future": lambda: _method(
        _engine_class(), "_resolve_future", ["future", "result"], coroutine=False
    ),
    "AsyncEngine._run_macrostep": lambda: _method(
        _engine_class(), "_run_macrostep", ["self"], coroutine=True
    ),
    "AsyncEngine._take_due_external_event": lambda: _method(
        _engine_class(),
        "_take_due_external_event",
        ["self", "first_result", "macrostep"],
        coroutine=True,
    ),
    "AsyncEngine._take_external_event": lambda: _method(
        _engine_class(), "_take_external_event", ["self", "external_event"], coroutine=True
    ),
    "InvokeManager._pending": lambda: _attribute(
        lambda: _engine_attrs()._invoke_manager, "_pending", lambda p: p == []
    ),
    "InvokeManager._make_context": lambda: _method(
        _invoke_manager(),
        "_make_context",
        ["self", "state", "event_kwargs", "handler"],
        coroutine=False,
    ),
    "AsyncEngine._exit_states": lambda: _method(
        _engine_class(),
        "_exit_states",
        ["self", "enabled_transitions", "trigger_data"],
        coroutine=True,
    ),
    "AsyncEngine._enter_states": lambda: _method(
        _engine_class(),
        "_enter_states",
        ["self", "enabled_transitions", "trigger_data", "states_to_exit", "previous_configuration"],
        coroutine=True,
    ),
    "AsyncEngine._get_args_kwargs": lambda: _method(
        _engine_class(),
        "_get_args_kwargs",
        ["self", "transition", "trigger_data", "target", "source"],
        coroutine=True,
    ),
    "AsyncEngine._conditions_match": lambda: _method(
        _engine_class(), "_conditions_match", ["self", "transition", "trigger_data"], coroutine=True
    ),
    "AsyncEngine._execute_transition_content": lambda: _method(
        _engine_class(),
        "_execute_transition_content",
        _CONTENT_PARAMS,
        coroutine=True,
    ),
    "InvokeManager._resolve_handler": lambda: _method(
        _invoke_manager(), "_resolve_handler", ["underlying"], coroutine=False
    ),
    "InvokeManager._engine": _invoke_manager_reads,
}


def test_the_fence_header_lists_exactly_the_names_the_canaries_check() -> None:
    assert sorted(header_names()) == sorted(CANARIES)


@pytest.mark.parametrize("name", sorted(header_names()))
def test_a_private_name_the_fence_relies_on_is_still_there(name: str) -> None:
    problem = CANARIES[name]()
    assert problem is None, (
        f"python-statemachine {statemachine.__version__}: {name} {problem}. "
        f"The kernel's fence (tui_agent/kernel/_statemachine_engine.py) relies on it: "
        f"{header_names()[name]}"
    )
