from __future__ import annotations

import asyncio

import pytest

from tui_agent.loop.hooks import HookOrderError, Next, OrderedHookSlot


def recorder(log: list[str], name: str, *, call_next: int = 1):
    async def handler(ctx: list[str], next_: Next[list[str]]) -> None:
        log.append(name)
        for _ in range(call_next):
            await next_(None)

    return handler


async def terminal_into(log: list[str]):
    async def terminal(ctx: list[str]) -> None:
        log.append("terminal")

    return terminal


async def test_with_no_handlers_the_terminal_runs() -> None:
    log: list[str] = []
    await OrderedHookSlot[list[str]]().run([], await terminal_into(log))
    assert log == ["terminal"]


async def test_handlers_run_in_registration_order_then_the_terminal() -> None:
    log: list[str] = []
    slot = OrderedHookSlot[list[str]]()
    slot.register("a", recorder(log, "a"))
    slot.register("b", recorder(log, "b"))
    await slot.run([], await terminal_into(log))
    assert log == ["a", "b", "terminal"]


async def test_before_and_after_place_the_entry_relative_to_another_id() -> None:
    log: list[str] = []
    slot = OrderedHookSlot[list[str]]()
    slot.register("compaction", recorder(log, "compaction"))
    slot.register("reminders", recorder(log, "reminders"), before="compaction")
    slot.register("audit", recorder(log, "audit"), after="reminders")
    await slot.run([])
    assert log == ["reminders", "audit", "compaction"]


async def test_registering_an_existing_id_replaces_it_in_place() -> None:
    log: list[str] = []
    slot = OrderedHookSlot[list[str]]()
    slot.register("a", recorder(log, "old"))
    slot.register("b", recorder(log, "b"))
    slot.register("a", recorder(log, "new"))
    await slot.run([])
    assert log == ["new", "b"]


async def test_giving_both_before_and_after_is_an_error() -> None:
    slot = OrderedHookSlot[list[str]]()
    slot.register("x", recorder([], "x"))
    with pytest.raises(HookOrderError):
        slot.register("y", recorder([], "y"), before="x", after="x")


async def test_ordering_against_a_missing_id_is_an_error() -> None:
    with pytest.raises(HookOrderError):
        OrderedHookSlot[list[str]]().register("y", recorder([], "y"), before="nope")


async def test_dispose_removes_exactly_that_entry() -> None:
    log: list[str] = []
    slot = OrderedHookSlot[list[str]]()
    first = slot.register("a", recorder(log, "first"))
    slot.register("a", recorder(log, "second"))  # replaces: the first disposable is now stale
    first.dispose()
    await slot.run([])
    assert log == ["second"]


async def test_not_calling_next_skips_downstream_and_the_terminal() -> None:
    log: list[str] = []
    slot = OrderedHookSlot[list[str]]()
    slot.register("gate", recorder(log, "gate", call_next=0))
    slot.register("after", recorder(log, "after"))
    await slot.run([], await terminal_into(log))
    assert log == ["gate"]


async def test_calling_next_twice_runs_the_rest_twice() -> None:
    log: list[str] = []
    slot = OrderedHookSlot[list[str]]()
    slot.register("twice", recorder(log, "twice", call_next=2))
    slot.register("rest", recorder(log, "rest"))
    await slot.run([], await terminal_into(log))
    assert log == ["twice", "rest", "terminal", "rest", "terminal"]


async def test_next_with_an_override_threads_the_new_context_downstream() -> None:
    seen: list[list[str]] = []
    slot = OrderedHookSlot[list[str]]()

    async def fork(ctx: list[str], next_: Next[list[str]]) -> None:
        await asyncio.gather(next_([*ctx, "left"]), next_([*ctx, "right"]))

    async def nested(ctx: list[str], next_: Next[list[str]]) -> None:
        await next_(None)

    async def terminal(ctx: list[str]) -> None:
        seen.append(ctx)

    slot.register("fork", fork)
    slot.register("nested", nested)
    await slot.run(["root"], terminal)
    assert sorted(seen) == [["root", "left"], ["root", "right"]]
