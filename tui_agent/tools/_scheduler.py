"""Runs tool tasks in parallel unless their accesses conflict, in strict queue order.

`add(accesses, start)` starts the task at once unless it conflicts with a running task or with
any task queued before it; otherwise it waits in the queue. Whenever a task settles the queue is
walked in order and every task that no longer conflicts (with the running ones, or with tasks
still queued ahead of it) starts, so a later task never overtakes an earlier conflicting one.

The returned future carries the task's result or exception. Its exception is marked as seen
from the start, so a task that fails and that nobody awaits never becomes an "exception was
never retrieved" error. Cancelling the future withdraws a queued task or cancels a running one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from tui_agent.tools._accesses import ToolAccesses, conflict

T = TypeVar("T")


@dataclass(eq=False)
class _Task(Generic[T]):
    accesses: ToolAccesses
    start: Callable[[], Awaitable[T]]
    future: asyncio.Future[T]
    runner: asyncio.Task[T] | None = field(default=None)


class ToolScheduler:
    def __init__(self) -> None:
        self._running: list[_Task[Any]] = []
        self._queue: list[_Task[Any]] = []

    @property
    def running(self) -> int:
        return len(self._running)

    @property
    def queued(self) -> int:
        return len(self._queue)

    def add(self, accesses: ToolAccesses, start: Callable[[], Awaitable[T]]) -> asyncio.Future[T]:
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        task = _Task(accesses, start, future)
        future.add_done_callback(lambda _f: self._on_future_done(task))
        if self._blocked(task, ahead=self._queue):
            self._queue.append(task)
        else:
            self._launch(task)
        return future

    def _blocked(self, task: _Task[Any], ahead: list[_Task[Any]]) -> bool:
        return any(conflict(task.accesses, other.accesses) for other in self._running) or any(
            conflict(task.accesses, other.accesses) for other in ahead
        )

    def _launch(self, task: _Task[Any]) -> None:
        self._running.append(task)
        try:
            awaitable = task.start()
        except Exception as error:  # start() itself threw: the task failed and is finished
            self._running.remove(task)
            if not task.future.done():
                task.future.set_exception(error)
            return
        runner = asyncio.ensure_future(awaitable)
        task.runner = runner
        runner.add_done_callback(lambda r: self._on_runner_done(task, r))

    def _on_runner_done(self, task: _Task[Any], runner: asyncio.Future[Any]) -> None:
        if task in self._running:
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
            self._pump()
        elif task.runner is not None and not task.runner.done():
            task.runner.cancel()  # its done callback releases the accesses

    def _pump(self) -> None:
        still_queued: list[_Task[Any]] = []
        for task in list(self._queue):
            if self._blocked(task, ahead=still_queued):
                still_queued.append(task)
            else:
                self._queue.remove(task)
                self._launch(task)
