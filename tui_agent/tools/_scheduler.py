"""Runs tool tasks in parallel unless their accesses conflict, in strict queue order.

`add(accesses, start)` starts the task at once unless it conflicts with a running task or with
any task queued before it; otherwise it waits in the queue. Whenever a task settles the queue is
walked in order and every task that no longer conflicts (with the running ones, or with tasks
still queued ahead of it) starts, so a later task never overtakes an earlier conflicting one.

One scheduler may serve several executors: a sub-agent's calls go through its parent's, so
they are ordered against the parent's calls and every other sub-agent's. The `task` call that
runs a sub-agent is delegated: it starts at once and is in nobody's way (were it held, the
child's own `all` call would wait for its parent's `task` to end, which waits for the child).

The returned future carries the task's result or exception. Its exception is marked as seen
from the start, so a task that fails and that nobody awaits never becomes an "exception was
never retrieved" error. Cancelling the future withdraws a queued task or cancels a running one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import field
from typing import Any, Generic, TypeVar

from tui_agent.lazy_dataclass import dataclass
from tui_agent.tools._accesses import ToolAccesses, conflict

T = TypeVar("T")


@dataclass(eq=False)
class _Task(Generic[T]):
    accesses: ToolAccesses
    start: Callable[[], Awaitable[T]]
    future: asyncio.Future[T]
    runner: asyncio.Task[T] | None = field(default=None)


def _writes(accesses: ToolAccesses) -> bool:
    return any(access.writes for access in accesses.files)


class _Index:
    """A set of tasks sorted by what they can conflict with, so a check does not compare a
    task with everything: only writers can conflict with a reader, only `all` with `none`.
    Delegated tasks are not held at all: they conflict with nothing."""

    def __init__(self) -> None:
        self.size = 0
        self.alls = 0
        self.writers: dict[_Task[Any], None] = {}  # insertion-ordered sets
        self.readers: dict[_Task[Any], None] = {}

    def add(self, task: _Task[Any]) -> None:
        if task.accesses.kind == "delegated":
            return
        self.size += 1
        if task.accesses.kind == "all":
            self.alls += 1
        elif task.accesses.kind == "files":
            (self.writers if _writes(task.accesses) else self.readers)[task] = None

    def remove(self, task: _Task[Any]) -> None:
        if task.accesses.kind == "delegated":
            return
        self.size -= 1
        if task.accesses.kind == "all":
            self.alls -= 1
        self.writers.pop(task, None)
        self.readers.pop(task, None)

    def conflicts(self, task: _Task[Any]) -> bool:
        accesses = task.accesses
        if accesses.kind == "delegated":
            return False
        if self.alls:
            return True
        if accesses.kind == "none":
            return False
        if accesses.kind == "all":
            return self.size > 0
        if any(conflict(accesses, other.accesses) for other in self.writers):
            return True
        return _writes(accesses) and any(
            conflict(accesses, other.accesses) for other in self.readers
        )


class ToolScheduler:
    def __init__(self) -> None:
        self._running = _Index()
        self._queue: list[_Task[Any]] = []
        self._queued = _Index()  # the same tasks as the queue

    @property
    def running(self) -> int:
        return self._running.size

    @property
    def queued(self) -> int:
        return len(self._queue)

    def add(self, accesses: ToolAccesses, start: Callable[[], Awaitable[T]]) -> asyncio.Future[T]:
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        task = _Task(accesses, start, future)
        future.add_done_callback(lambda _f: self._on_future_done(task))
        if self._running.conflicts(task) or self._queued.conflicts(task):
            self._queue.append(task)
            self._queued.add(task)
        else:
            self._launch(task)
        return future

    def _launch(self, task: _Task[Any]) -> None:
        try:
            awaitable = task.start()
        except Exception as error:  # start() itself threw: the task failed and is finished
            if not task.future.done():
                task.future.set_exception(error)
            return
        self._running.add(task)
        runner = asyncio.ensure_future(awaitable)
        task.runner = runner
        runner.add_done_callback(lambda r: self._on_runner_done(task, r))

    def _on_runner_done(self, task: _Task[Any], runner: asyncio.Future[Any]) -> None:
        self._running.remove(task)
        if not task.future.done():
            if runner.cancelled():
                task.future.cancel()
            elif (error := runner.exception()) is not None:
                task.future.set_exception(error)
            else:
                task.future.set_result(runner.result())
        elif not runner.cancelled():
            runner.exception()  # mark as retrieved: the caller already gave up on it
        self._pump()

    def _on_future_done(self, task: _Task[Any]) -> None:
        if not task.future.cancelled():
            task.future.exception()  # mark as retrieved; awaiting callers still see it
            return
        if task in self._queue:
            self._queue.remove(task)
            self._queued.remove(task)
            self._pump()
        elif task.runner is not None and not task.runner.done():
            task.runner.cancel()  # its done callback releases the accesses

    def _pump(self) -> None:
        """Walk the queue in order; start each task nothing running or still queued ahead of
        it conflicts with."""
        still_queued: list[_Task[Any]] = []
        ahead = _Index()
        for task in self._queue:
            if self._running.conflicts(task) or ahead.conflicts(task):
                still_queued.append(task)
                ahead.add(task)
            else:
                self._launch(task)
        self._queue, self._queued = still_queued, ahead
