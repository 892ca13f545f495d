"""Scheduler order and parallelism, shown by the start/end events of gated fake tasks."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from tui_agent.tools import ToolAccesses, ToolScheduler

A = ToolAccesses


class Gated:
    """Tasks that log when they start and end, and end only when the test opens their gate."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.gates: dict[str, asyncio.Event] = {}

    def task(self, name: str, result: Any = None) -> Callable[[], Coroutine[Any, Any, Any]]:
        gate = self.gates.setdefault(name, asyncio.Event())

        async def run() -> Any:
            self.log.append(f"start {name}")
            await gate.wait()
            self.log.append(f"end {name}")
            return result if result is not None else name

        return run

    def running(self) -> set[str]:
        started = {e.split()[1] for e in self.log if e.startswith("start")}
        ended = {e.split()[1] for e in self.log if e.startswith("end")}
        return started - ended

    async def finish(self, name: str) -> None:
        self.gates[name].set()
        for _ in range(5):  # let the task end and the scheduler walk its queue
            await asyncio.sleep(0)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_two_reads_of_the_same_path_run_together() -> None:
    g, s = Gated(), ToolScheduler()
    s.add(A.read_file("/a"), g.task("r1"))
    s.add(A.read_file("/a"), g.task("r2"))
    await settle()
    assert g.running() == {"r1", "r2"}


async def test_a_write_waits_for_the_read_of_the_same_path() -> None:
    g, s = Gated(), ToolScheduler()
    s.add(A.read_file("/a"), g.task("r"))
    s.add(A.write_file("/a"), g.task("w"))
    await settle()
    assert g.running() == {"r"}
    await g.finish("r")
    assert g.running() == {"w"}
    assert g.log == ["start r", "end r", "start w"]


async def test_writes_to_the_same_path_run_one_after_the_other() -> None:
    g, s = Gated(), ToolScheduler()
    s.add(A.write_file("/a"), g.task("w1"))
    s.add(A.write_file("/a"), g.task("w2"))
    await settle()
    assert g.running() == {"w1"}
    await g.finish("w1")
    assert g.running() == {"w2"}


async def test_paths_differing_only_in_case_still_serialize() -> None:
    g, s = Gated(), ToolScheduler()
    s.add(A.write_file("/repo/A.txt"), g.task("w1"))
    s.add(A.read_file("/repo/a.txt"), g.task("r"))
    await settle()
    assert g.running() == {"w1"}


async def test_disjoint_paths_do_not_block_each_other() -> None:
    g, s = Gated(), ToolScheduler()
    s.add(A.write_file("/a"), g.task("w1"))
    s.add(A.write_file("/b"), g.task("w2"))
    await settle()
    assert g.running() == {"w1", "w2"}


async def test_a_tree_write_covers_its_descendants() -> None:
    g, s = Gated(), ToolScheduler()
    s.add(A.write_tree("/repo"), g.task("tree"))
    s.add(A.read_file("/repo/x/y"), g.task("r"))
    s.add(A.read_file("/elsewhere"), g.task("other"))
    await settle()
    assert g.running() == {"tree", "other"}


async def test_all_runs_alone() -> None:
    g, s = Gated(), ToolScheduler()
    s.add(A.read_file("/a"), g.task("r"))
    s.add(A.all(), g.task("shell"))
    s.add(A.none(), g.task("free"))  # conflicts with nothing else, but `all` takes everything
    await settle()
    assert g.running() == {"r"}
    await g.finish("r")
    assert g.running() == {"shell"}
    await g.finish("shell")
    assert g.running() == {"free"}


async def test_a_delegated_task_is_in_nobodys_way_and_waits_for_nobody() -> None:
    g, s = Gated(), ToolScheduler()
    s.add(A.all(), g.task("shell"))
    s.add(A.delegated(), g.task("task"))  # starts beside `all`, unlike a call touching nothing
    await settle()
    assert g.running() == {"shell", "task"}
    await g.finish("shell")
    s.add(A.all(), g.task("child_shell"))  # the sub-agent's own `all` call, while its task runs
    s.add(A.write_file("/a"), g.task("child_write"))
    await settle()
    assert g.running() == {"task", "child_shell"}
    await g.finish("child_shell")
    assert g.running() == {"task", "child_write"}


async def test_calls_that_touch_nothing_run_together() -> None:
    g, s = Gated(), ToolScheduler()
    s.add(A.none(), g.task("n1"))
    s.add(A.write_file("/a"), g.task("w"))
    s.add(A.none(), g.task("n2"))
    await settle()
    assert g.running() == {"n1", "w", "n2"}


async def test_w1_w2_and_an_unrelated_read_start_in_the_spec_order() -> None:
    g, s = Gated(), ToolScheduler()
    s.add(A.write_file("/a"), g.task("w1"))
    s.add(A.write_file("/a"), g.task("w2"))
    s.add(A.read_file("/b"), g.task("r"))
    await settle()
    assert g.running() == {"w1", "r"}
    await g.finish("w1")
    assert g.running() == {"w2", "r"}


async def test_a_queued_all_is_not_overtaken_by_a_later_reader() -> None:
    g, s = Gated(), ToolScheduler()
    s.add(A.write_file("/a"), g.task("writer"))
    s.add(A.all(), g.task("all"))
    s.add(A.read_file("/b"), g.task("reader"))
    await settle()
    assert g.running() == {"writer"}
    await g.finish("writer")
    assert g.running() == {"all"}
    await g.finish("all")
    assert [e for e in g.log if e.startswith("start")] == [
        "start writer",
        "start all",
        "start reader",
    ]


async def test_a_queued_write_is_not_overtaken_by_a_later_conflicting_read() -> None:
    g, s = Gated(), ToolScheduler()
    s.add(A.read_file("/a"), g.task("r1"))
    s.add(A.write_file("/a"), g.task("w"))
    s.add(A.read_file("/a"), g.task("r2"))  # would not conflict with r1, but w is queued ahead
    await settle()
    assert g.running() == {"r1"}
    await g.finish("r1")
    assert g.running() == {"w"}
    await g.finish("w")
    assert g.running() == {"r2"}


async def test_results_awaited_in_submission_order_come_back_in_that_order() -> None:
    g, s = Gated(), ToolScheduler()
    futures = [s.add(A.read_file(f"/{n}"), g.task(n)) for n in ("a", "b", "c")]
    for name in ("c", "a", "b"):
        g.gates[name].set()
    assert [await f for f in futures] == ["a", "b", "c"]


async def test_a_failing_task_releases_its_accesses_and_rejects_its_future() -> None:
    s = ToolScheduler()
    g = Gated()

    async def boom() -> None:
        raise RuntimeError("boom")

    failing = s.add(A.write_file("/a"), boom)
    s.add(A.write_file("/a"), g.task("after"))
    with pytest.raises(RuntimeError, match="boom"):
        await failing
    await settle()
    assert g.running() == {"after"}


async def test_a_start_that_throws_at_once_counts_as_finished() -> None:
    s = ToolScheduler()
    g = Gated()

    def explode() -> Coroutine[Any, Any, None]:
        raise ValueError("no start")

    failing = s.add(A.all(), explode)
    s.add(A.all(), g.task("next"))
    with pytest.raises(ValueError, match="no start"):
        await failing
    await settle()
    assert g.running() == {"next"}


async def test_an_unawaited_failing_task_is_not_an_unhandled_error() -> None:
    loop = asyncio.get_running_loop()
    seen: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    s = ToolScheduler()

    async def boom() -> None:
        raise RuntimeError("nobody listens")

    s.add(A.none(), boom)
    await settle()
    gc.collect()  # an unretrieved exception would be reported when the future is collected
    await settle()
    assert seen == []
    assert s.running == 0


async def test_cancelling_a_queued_task_withdraws_it_and_unblocks_the_queue() -> None:
    g, s = Gated(), ToolScheduler()
    s.add(A.write_file("/a"), g.task("w1"))
    queued = s.add(A.all(), g.task("all"))
    s.add(A.read_file("/b"), g.task("r"))
    await settle()
    assert g.running() == {"w1"}
    queued.cancel()
    await settle()
    assert g.running() == {"w1", "r"}
    assert "start all" not in g.log


async def test_cancelling_a_running_task_cancels_it_and_frees_its_accesses() -> None:
    g, s = Gated(), ToolScheduler()
    running = s.add(A.write_file("/a"), g.task("w1"))
    s.add(A.write_file("/a"), g.task("w2"))
    await settle()
    running.cancel()
    await settle()
    assert running.cancelled()
    assert g.log == ["start w1", "start w2"]
    assert s.queued == 0
