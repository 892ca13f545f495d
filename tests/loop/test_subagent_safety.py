"""Sub-agents are as safe as their parent: they ask through the parent's approvals, inherit its
mode, rules and tools, and never edit a file at the same time as the parent or a sibling.

Driven through the public service API with the routed model double of `test_subagents`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import pytest

from tests.loop.test_subagents import RoutedModel, held, open_loop, opened, task, tool_results
from tests.support.fake_model import calls, text
from tui_agent.loop import events as ev
from tui_agent.loop import factory
from tui_agent.loop.service import AgentLoopService
from tui_agent.tools import (
    Shell,
    ShellArgs,
    Tool,
    ToolAccesses,
    ToolArgs,
    ToolContext,
    ToolScheduler,
)
from tui_agent.vocab import ToolResult

__all__ = ["opened"]  # the fixture, used by name

E = TypeVar("E", bound=ev.LoopEvent)
T = TypeVar("T")


class Seen:
    """Every event of a loop, and a way to wait for one without racing the clock."""

    def __init__(self, service: AgentLoopService) -> None:
        self.events: list[ev.LoopEvent] = []
        self._changed = asyncio.Event()
        service.subscribe(self._add)

    def _add(self, event: ev.LoopEvent) -> None:
        self.events.append(event)
        self._changed.set()

    def of(self, kind: type[E], where: Callable[[E], bool] = lambda e: True) -> list[E]:
        return [e for e in self.events if isinstance(e, kind) and where(e)]

    async def first(self, kind: type[E], where: Callable[[E], bool] = lambda e: True) -> E:
        while not (found := self.of(kind, where)):
            self._changed.clear()
            await self._changed.wait()
        return found[0]


class AppendArgs(ToolArgs):
    path: str
    line: str


class GatedAppend(Tool[AppendArgs]):
    """An edit held open between its read and its write: it reads the file, says so (`read`
    and `changed`), waits for the test to open its gate, then writes what it read plus one
    line. Two of them that overlap lose one line, as two edits of one file would."""

    name: ClassVar[str] = "gated_append"
    description: ClassVar[str] = "Appends a line to a file."
    Args = AppendArgs
    edits_files: ClassVar[bool] = True

    def __init__(self, root: Path, changed: asyncio.Event) -> None:
        self.root = root
        self.changed = changed
        self.read: set[str] = set()
        self.gates: dict[str, asyncio.Event] = {}

    def gate(self, line: str) -> asyncio.Event:
        return self.gates.setdefault(line, asyncio.Event())

    def accesses(self, args: AppendArgs) -> ToolAccesses:
        return ToolAccesses.read_write_file(str((self.root / args.path).resolve()))

    async def execute(self, args: AppendArgs, ctx: ToolContext) -> ToolResult:
        path = self.root / args.path
        before = path.read_text()
        self.read.add(args.line)
        self.changed.set()
        await self.gate(args.line).wait()
        path.write_text(before + args.line + "\n")
        return ToolResult(output=f"appended {args.line}")


class WatchedScheduler(ToolScheduler):
    """A scheduler that says when it is given a call (`changed`), so a test can see one wait."""

    def __init__(self, changed: asyncio.Event) -> None:
        super().__init__()
        self.changed = changed

    def add(self, accesses: ToolAccesses, start: Callable[[], Awaitable[T]]) -> asyncio.Future[T]:
        future = super().add(accesses, start)
        self.changed.set()
        return future


@pytest.fixture
def changed() -> asyncio.Event:
    """Set whenever a gated append reads or a scheduler takes a call."""
    return asyncio.Event()


@pytest.fixture
def schedulers(monkeypatch: pytest.MonkeyPatch, changed: asyncio.Event) -> list[ToolScheduler]:
    """Every scheduler the factory makes, watched."""
    made: list[ToolScheduler] = []

    def make() -> ToolScheduler:
        made.append(WatchedScheduler(changed))
        return made[-1]

    monkeypatch.setattr(factory, "ToolScheduler", make)
    return made


async def until(condition: Callable[[], bool], changed: asyncio.Event) -> None:
    while not condition():
        changed.clear()
        await changed.wait()


def append(line: str) -> tuple[str, dict[str, Any]]:
    return ("gated_append", {"path": "a.txt", "line": line})


async def test_two_tasks_editing_one_file_take_turns_and_both_edits_survive(
    tmp_path: Path,
    opened: list[AgentLoopService],
    schedulers: list[ToolScheduler],
    changed: asyncio.Event,
) -> None:
    appender = GatedAppend(tmp_path / "ws", changed)
    second, release_second = held(calls(append("B"), prefix="b"))
    model = RoutedModel(
        {
            "PARENT JOB": [
                calls(task("one", "CHILD A"), task("two", "CHILD B"), prefix="p"),
                text("both done"),
            ],
            "CHILD A": [calls(append("A"), prefix="a"), text("A done")],
            "CHILD B": [second, text("B done")],
        }
    )
    service = await open_loop(tmp_path, opened, model, tools=(appender,))
    handle = await service.submit("PARENT JOB")
    await until(lambda: "A" in appender.read, changed)  # A read a.txt and holds its write

    release_second.set()
    # B's edit either reads the file too (each child scheduling its own calls: A's line will
    # be lost) or waits in a scheduler behind A's: whichever happens, A may write now.
    await until(lambda: "B" in appender.read or any(s.queued for s in schedulers), changed)
    appender.gate("A").set()
    appender.gate("B").set()

    assert (await handle.result()).type == "completed"
    assert (tmp_path / "ws" / "a.txt").read_text() == "alpha\nA\nB\n"
    results = tool_results(service)
    assert [results["p_0"].text, results["p_1"].text] == ["A done", "B done"]


async def test_a_child_runs_the_parents_own_shell_tool(
    tmp_path: Path, opened: list[AgentLoopService], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same instance, not one built from defaults: whatever configures the parent's shell
    # (the OS sandbox among it) configures the child's.
    ran_on: list[Shell] = []
    execute = Shell.execute

    async def recording(self: Shell, args: ShellArgs, ctx: ToolContext) -> ToolResult:
        ran_on.append(self)
        return await execute(self, args, ctx)

    monkeypatch.setattr(Shell, "execute", recording)
    model = RoutedModel(
        {
            "PARENT JOB": [
                calls(("shell", {"command": "echo parent"}), prefix="p"),
                calls(task("t", "CHILD JOB"), prefix="q"),
                text("ok"),
            ],
            "CHILD JOB": [calls(("shell", {"command": "echo child"}), prefix="c"), text("ok")],
        }
    )
    service = await open_loop(tmp_path, opened, model)
    assert (await (await service.submit("PARENT JOB")).result()).type == "completed"
    assert len(ran_on) == 2 and ran_on[0] is ran_on[1]


def write(path: str) -> tuple[str, dict[str, Any]]:
    return ("write_file", {"path": path, "content": f"{path}\n"})


async def test_a_childs_call_is_asked_about_through_the_parent_under_its_task(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    model = RoutedModel(
        {
            "PARENT JOB": [calls(task("write it", "CHILD JOB"), prefix="p"), text("done")],
            "CHILD JOB": [calls(write("b.txt"), prefix="c"), text("wrote b")],
        }
    )
    service = await open_loop(tmp_path, opened, model, approval_mode="ask")
    seen = Seen(service)
    handle = await service.submit("PARENT JOB")

    asked = await seen.first(ev.ApprovalRequested)
    # The task's row is what the person sees and may stop: the question names that call.
    assert (asked.call_id, asked.name, asked.summary) == ("p_0", "write_file", "b.txt")
    assert not (tmp_path / "ws" / "b.txt").exists()
    await service.answer_approval(asked.request_id, "once")

    assert (await handle.result()).type == "completed"
    assert (tmp_path / "ws" / "b.txt").read_text() == "b.txt\n"
    assert tool_results(service)["p_0"].text == "wrote b"


async def test_stopping_a_task_while_its_child_waits_for_approval_withdraws_the_question(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    never, _gate = held(text("never said"))
    model = RoutedModel(
        {
            "PARENT JOB": [calls(task("write it", "CHILD JOB"), prefix="p"), text("went on")],
            "CHILD JOB": [calls(write("b.txt"), prefix="c"), never],
        }
    )
    service = await open_loop(tmp_path, opened, model, approval_mode="ask")
    seen = Seen(service)
    handle = await service.submit("PARENT JOB")
    asked = await seen.first(ev.ApprovalRequested)

    assert await service.cancel_tool("p_0")

    withdrawn = await seen.first(ev.ApprovalResolved)  # the box goes before the task ends
    assert (withdrawn.request_id, withdrawn.decision) == (asked.request_id, "deny")
    finished = await seen.first(ev.ToolFinished, lambda e: e.id == "p_0")
    assert seen.events.index(withdrawn) < seen.events.index(finished)
    result = await handle.result()
    assert result.type == "completed" and result.steps == 2  # the parent's turn went on
    assert tool_results(service)["p_0"].is_error
    run = service.subagent("p_0")
    assert run is not None and run.state == "cancelled"
    assert not (tmp_path / "ws" / "b.txt").exists()


async def test_a_headless_childs_edit_is_denied_as_the_parents_would_be(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    model = RoutedModel(
        {
            "PARENT JOB": [
                calls(write("p.txt"), task("t", "CHILD JOB"), prefix="p"),
                text("done"),
            ],
            "CHILD JOB": [calls(write("c.txt"), prefix="c"), text("could not write")],
        }
    )
    service = await open_loop(tmp_path, opened, model, approval_mode="ask", interactive=False)
    assert (await (await service.submit("PARENT JOB")).result()).type == "completed"

    # What each model was told, side by side: the same words but for the path.
    parents = next(m for m in model.requests_for("PARENT JOB")[-1].messages if m.role == "tool")
    (childs,) = [m for m in model.requests_for("CHILD JOB")[-1].messages if m.role == "tool"]
    assert childs.text == parents.text.replace("p.txt", "c.txt")
    assert "cannot ask anyone" in childs.text and "--yolo" in childs.text
    assert not (tmp_path / "ws" / "p.txt").exists() and not (tmp_path / "ws" / "c.txt").exists()


async def test_a_mode_change_in_the_parent_applies_to_a_running_child(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    later, release_later = held(calls(write("c.txt"), prefix="d"))
    model = RoutedModel(
        {
            "PARENT JOB": [calls(task("t", "CHILD JOB"), prefix="p"), text("done")],
            "CHILD JOB": [calls(write("b.txt"), prefix="c"), later, text("wrote both")],
        }
    )
    service = await open_loop(tmp_path, opened, model, approval_mode="ask")
    seen = Seen(service)
    handle = await service.submit("PARENT JOB")
    asked = await seen.first(ev.ApprovalRequested)  # ask mode: the child's first edit asks
    await service.answer_approval(asked.request_id, "once")

    service.set_approval_mode("auto-edit")  # while the child runs (its next step is held)
    release_later.set()

    assert (await handle.result()).type == "completed"
    assert len(seen.of(ev.ApprovalRequested)) == 1  # the second edit did not ask
    assert (tmp_path / "ws" / "c.txt").read_text() == "c.txt\n"


async def test_an_always_answer_in_the_parent_applies_to_its_children(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    model = RoutedModel(
        {
            "PARENT JOB": [
                calls(write("p.txt"), prefix="p"),
                calls(task("t", "CHILD JOB"), prefix="q"),
                text("done"),
            ],
            "CHILD JOB": [calls(write("c.txt"), prefix="c"), text("wrote c")],
        }
    )
    service = await open_loop(tmp_path, opened, model, approval_mode="ask")
    seen = Seen(service)
    handle = await service.submit("PARENT JOB")
    asked = await seen.first(ev.ApprovalRequested)
    assert asked.call_id == "p_0"
    await service.answer_approval(asked.request_id, "always")

    assert (await handle.result()).type == "completed"
    assert len(seen.of(ev.ApprovalRequested)) == 1  # the child's write ran on the rule
    assert (tmp_path / "ws" / "c.txt").read_text() == "c.txt\n"


async def test_a_nested_sub_agent_is_asked_about_under_the_top_level_task(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    model = RoutedModel(
        {
            "PARENT JOB": [calls(task("outer", "CHILD JOB"), prefix="p"), text("done")],
            "CHILD JOB": [calls(task("inner", "NESTED JOB"), prefix="c"), text("child ok")],
            "NESTED JOB": [calls(write("g.txt"), prefix="g"), text("wrote g")],
        }
    )
    service = await open_loop(tmp_path, opened, model, approval_mode="ask", max_depth=2)
    seen = Seen(service)
    handle = await service.submit("PARENT JOB")

    asked = await seen.first(ev.ApprovalRequested)
    assert (asked.call_id, asked.summary) == ("p_0", "g.txt")  # the row the person sees
    await service.answer_approval(asked.request_id, "once")

    assert (await handle.result()).type == "completed"
    assert (tmp_path / "ws" / "g.txt").read_text() == "g.txt\n"
