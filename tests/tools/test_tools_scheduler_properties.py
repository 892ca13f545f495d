"""Scheduler properties over random batches and random completion orders (hypothesis)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tui_agent.tools import ToolAccesses, ToolScheduler, conflict

PATHS = ["/a", "/A", "/a/b", "/c", "/"]


@st.composite
def accesses(draw: st.DrawFn) -> ToolAccesses:
    kind = draw(st.sampled_from(["none", "delegated", "all", "file", "file", "file", "file"]))
    if kind == "none":
        return ToolAccesses.none()
    if kind == "delegated":
        return ToolAccesses.delegated()
    if kind == "all":
        return ToolAccesses.all()
    op = draw(st.sampled_from(["read", "write", "readwrite", "search"]))
    return ToolAccesses.file(op, draw(st.sampled_from(PATHS)), recursive=draw(st.booleans()))


async def run_batch(batch: list[ToolAccesses], picks: list[int]) -> list[tuple[str, int]]:
    scheduler = ToolScheduler()
    events: list[tuple[str, int]] = []
    gates = [asyncio.Event() for _ in batch]
    running: set[int] = set()

    def task(index: int) -> Callable[[], Coroutine[Any, Any, int]]:
        async def run() -> int:
            for other in running:
                assert not conflict(batch[index], batch[other]), (index, other)
            running.add(index)
            events.append(("start", index))
            await gates[index].wait()
            running.discard(index)
            events.append(("end", index))
            return index

        return run

    futures = [scheduler.add(access, task(i)) for i, access in enumerate(batch)]
    turn = 0
    while not all(f.done() for f in futures):
        await asyncio.sleep(0)
        if running:  # finish one of the running tasks, chosen by the drawn numbers
            candidates = sorted(running)
            gates[candidates[picks[turn % len(picks)] % len(candidates)]].set()
            turn += 1
        for _ in range(3):
            await asyncio.sleep(0)
    assert [await f for f in futures] == list(range(len(batch)))
    return events


@settings(max_examples=150, deadline=None)
@given(
    batch=st.lists(accesses(), min_size=1, max_size=12),
    picks=st.lists(st.integers(min_value=0, max_value=11), min_size=1, max_size=24),
)
def test_conflicting_tasks_never_overlap_and_never_overtake(
    batch: list[ToolAccesses], picks: list[int]
) -> None:
    events = asyncio.run(run_batch(batch, picks))
    start = {i: n for n, (kind, i) in enumerate(events) if kind == "start"}
    end = {i: n for n, (kind, i) in enumerate(events) if kind == "end"}
    assert sorted(start) == list(range(len(batch)))
    for later in range(len(batch)):
        for earlier in range(later):
            if conflict(batch[earlier], batch[later]):
                assert end[earlier] < start[later], (earlier, later)
