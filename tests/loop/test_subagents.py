"""Sub-agents (`task`) and the plan (`todo_write`), driven through the public service API.

The model double routes each request by the job it belongs to (the first user message), so the
parent's and the children's scripts stay apart however their requests interleave.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.support.fake_model import Step, calls, play_next, text
from tui_agent.context import EventLog, load_history, read_log
from tui_agent.loop import events as ev
from tui_agent.loop.api import LoopInfo
from tui_agent.loop.factory import SubagentOptions, build_loop
from tui_agent.loop.replay import replay
from tui_agent.loop.service import AgentLoopService, LoopOptions
from tui_agent.loop.subagent import SUBAGENT_PROMPT
from tui_agent.tools import ApprovalMode, Tool, ToolAborted, ToolArgs, ToolContext
from tui_agent.vocab import (
    LLMRequest,
    StreamEvent,
    ToolResult,
)


@dataclass
class RoutedModel:
    """Plays `routes[key]` for requests whose first user message contains `key`."""

    routes: dict[str, list[Step]]
    name: str = "scripted"
    model: str = "fake-model"
    requests: list[LLMRequest] = field(default_factory=list)

    def requests_for(self, key: str) -> list[LLMRequest]:
        return [r for r in self.requests if key in _first_user_text(r)]

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        first = _first_user_text(request)
        key = next(k for k in self.routes if k in first)
        async for event in play_next(self.routes[key]):
            yield event

    async def aclose(self) -> None:
        return None


def _first_user_text(request: LLMRequest) -> str:
    return next(m.text for m in request.messages if m.role == "user")


class WaitArgs(ToolArgs):
    label: str


class WaitForAbort(Tool[WaitArgs]):
    """Runs until its call is aborted; `started` tells the test it is running."""

    name: ClassVar[str] = "wait_for_abort"
    description: ClassVar[str] = "Waits until stopped."
    Args = WaitArgs
    read_only: ClassVar[bool] = True

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def execute(self, args: WaitArgs, ctx: ToolContext) -> ToolResult:
        self.started.set()
        await ctx.signal.wait()
        raise ToolAborted(partial="stopped")


def task(description: str, prompt: str, **extra: Any) -> tuple[str, dict[str, Any]]:
    return ("task", {"description": description, "prompt": prompt, **extra})


def held(step: Step) -> tuple[Step, asyncio.Event]:
    gate = asyncio.Event()
    step.hold = gate
    return step, gate


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncIterator[list[AgentLoopService]]:
    services: list[AgentLoopService] = []
    yield services
    for service in services:
        await service.close()
        assert service.engine.errors == []


async def open_loop(
    tmp_path: Path,
    opened: list[AgentLoopService],
    model: RoutedModel,
    *,
    tools: tuple[Tool[Any], ...] = (),
    history: Any = (),
    max_depth: int = 1,
    approval_mode: ApprovalMode = "yolo",
    interactive: bool = True,
) -> AgentLoopService:
    workspace = tmp_path / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "a.txt").write_text("alpha\n")
    session = tmp_path / "session"
    service = await build_loop(
        provider=model,
        info=LoopInfo(
            provider="scripted",
            model=model.model,
            context_window=128_000,
            approval_mode=approval_mode,
            session_id="parent",
            workspace=str(workspace),
            demo=False,
        ),
        workspace=workspace,
        spill_dir=session / "spill",
        log=EventLog(session / "events.jsonl"),
        system_prompt=lambda names: "You are a test agent.",
        history=history,
        interactive=interactive,
        # Every tool and hook here honours an abort: a long grace never delays a test, and a
        # busy machine cannot outlast it (the turn would settle before a call's clean-up).
        options=LoopOptions(abort_grace_s=60),
        extra_tools=tools,
        subagent_options=SubagentOptions(max_depth=max_depth),
    )
    opened.append(service)
    return service


def tool_results(service: AgentLoopService) -> dict[str, Any]:
    return {
        e.message.tool_call_id: e.message
        for e in service.history()
        if e.message.role == "tool" and e.message.tool_call_id
    }


async def test_a_task_runs_a_child_with_only_the_job_and_returns_its_answer(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    model = RoutedModel(
        {
            "PARENT JOB": [
                calls(task("read a", "CHILD JOB: read a.txt"), prefix="p"),
                text("The child said alpha."),
            ],
            "CHILD JOB": [
                calls(("read_file", {"path": "a.txt"}), prefix="c"),
                text("a.txt holds alpha", usage=7),
            ],
        }
    )
    service = await open_loop(tmp_path, opened, model)
    seen: list[ev.LoopEvent] = []
    service.subscribe(seen.append)

    result = await (await service.submit("PARENT JOB: delegate it")).result()

    assert result.type == "completed"
    child_requests = model.requests_for("CHILD JOB")
    assert len(child_requests) == 2
    for request in child_requests:  # a fresh history: never the parent's conversation
        assert all("PARENT JOB" not in m.text for m in request.messages)
        assert SUBAGENT_PROMPT in request.system
    child_tool_result = child_requests[1].messages[-1]
    assert child_tool_result.role == "tool" and "alpha" in child_tool_result.text
    assert tool_results(service)["p_0"].text == "a.txt holds alpha"
    updates = [e.text for e in seen if isinstance(e, ev.ToolUpdated) and e.id == "p_0"]
    assert any("read_file" in u for u in updates)  # the task's row shows the child's tool
    machines = {e.machine_id for e in seen if isinstance(e, ev.MachineTransition)}
    assert "task p_0 · agent" in machines  # the inspector lists the child's machines


async def test_a_childs_usage_is_added_to_the_parents_totals(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    model = RoutedModel(
        {
            "PARENT JOB": [calls(task("t", "CHILD JOB"), prefix="p"), text("done", usage=1)],
            "CHILD JOB": [text("child answer", usage=50)],
        }
    )
    service = await open_loop(tmp_path, opened, model)
    usage: list[ev.UsageChanged] = []
    service.subscribe(lambda e: usage.append(e) if isinstance(e, ev.UsageChanged) else None)

    await (await service.submit("PARENT JOB")).result()

    # parent: 110 (calls) + 11 (text); child: 500 in + 50 out
    assert usage[-1].total.total == 110 + 11 + 550
    assert usage[-1].context_tokens == 11  # the parent's own context, not the child's

    await service.close()
    reopened = replay(read_log(tmp_path / "session" / "events.jsonl"), context_window=128_000)
    assert reopened.usage == usage[-1].total  # the totals a reopened session carries on from
    last = [e for e in reopened.events if isinstance(e, ev.UsageChanged)][-1]
    assert (last.total, last.context_tokens) == (usage[-1].total, usage[-1].context_tokens)


async def test_task_calls_in_one_step_run_in_parallel(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    slow, release = held(text("slow answer"))
    model = RoutedModel(
        {
            "PARENT JOB": [
                calls(task("one", "CHILD SLOW"), task("two", "CHILD FAST"), prefix="p"),
                text("both done"),
            ],
            "CHILD SLOW": [slow],
            "CHILD FAST": [text("fast answer")],
        }
    )
    service = await open_loop(tmp_path, opened, model)
    fast_done = asyncio.Event()
    service.subscribe(
        lambda e: fast_done.set() if isinstance(e, ev.ToolFinished) and e.id == "p_1" else None
    )
    handle = await service.submit("PARENT JOB")

    await fast_done.wait()  # the fast child finished while the slow one is still streaming
    assert model.requests_for("CHILD SLOW") and not tool_results(service)
    release.set()
    assert (await handle.result()).type == "completed"
    results = tool_results(service)
    assert [results["p_0"].text, results["p_1"].text] == ["slow answer", "fast answer"]


async def test_cancelling_the_parent_cancels_the_child_with_its_calls_paired(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    waiter = WaitForAbort()
    model = RoutedModel(
        {
            "PARENT JOB": [calls(task("t", "CHILD JOB"), prefix="p")],
            "CHILD JOB": [calls(("wait_for_abort", {"label": "x"}), prefix="c")],
        }
    )
    service = await open_loop(tmp_path, opened, model, tools=(waiter,))
    handle = await service.submit("PARENT JOB")
    await waiter.started.wait()
    run = service.subagent("p_0")
    assert run is not None and run.state == "running" and run.loop is not None
    assert any(key.startswith("task p_0 · ") for key in service.snapshot().machine_states)

    await service.cancel()

    assert (await handle.result()).type == "cancelled"
    assert run.state == "cancelled" and run.loop is None
    child = load_history(run.log_path)
    calls_made = [c.id for e in child for c in e.message.tool_calls]
    paired = [e.message.tool_call_id for e in child if e.message.role == "tool"]
    assert calls_made == ["c_0"] and paired == ["c_0"]


async def test_cancelling_one_task_stops_that_child_and_the_turn_goes_on(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    waiter = WaitForAbort()
    model = RoutedModel(
        {
            "PARENT JOB": [calls(task("t", "CHILD JOB"), prefix="p"), text("carried on")],
            "CHILD JOB": [calls(("wait_for_abort", {"label": "x"}), prefix="c")],
        }
    )
    service = await open_loop(tmp_path, opened, model, tools=(waiter,))
    handle = await service.submit("PARENT JOB")
    await waiter.started.wait()

    assert await service.cancel_tool("p_0")

    result = await handle.result()
    assert result.type == "completed" and result.steps == 2
    assert tool_results(service)["p_0"].is_error
    run = service.subagent("p_0")
    assert run is not None and run.state == "cancelled"


async def test_a_child_below_the_depth_limit_gets_no_task_tool(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    model = RoutedModel(
        {
            "PARENT JOB": [calls(task("t", "CHILD JOB"), prefix="p"), text("ok")],
            "CHILD JOB": [text("child ok")],
        }
    )
    service = await open_loop(tmp_path, opened, model)
    await (await service.submit("PARENT JOB")).result()
    parent_tools = {t.name for t in model.requests_for("PARENT JOB")[0].tools}
    child_tools = {t.name for t in model.requests_for("CHILD JOB")[0].tools}
    assert "task" in parent_tools and "task" not in child_tools
    assert child_tools == parent_tools - {"task"}


async def test_a_task_may_limit_the_childs_tools_and_unknown_names_are_refused(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    model = RoutedModel(
        {
            "PARENT JOB": [
                calls(
                    task("t", "CHILD JOB", tools=["read_file", "grep"]),
                    task("u", "OTHER", tools=["rm_rf"]),
                    prefix="p",
                ),
                text("ok"),
            ],
            "CHILD JOB": [text("child ok")],
            "OTHER": [],
        }
    )
    service = await open_loop(tmp_path, opened, model)
    await (await service.submit("PARENT JOB")).result()
    assert {t.name for t in model.requests_for("CHILD JOB")[0].tools} == {"read_file", "grep"}
    refused = tool_results(service)["p_1"]
    assert refused.is_error and "rm_rf" in refused.text
    assert not model.requests_for("OTHER")


async def test_the_childs_work_is_kept_in_its_own_log_beside_the_parents(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    model = RoutedModel(
        {
            "PARENT JOB": [calls(task("t", "CHILD JOB"), prefix="p"), text("ok")],
            "CHILD JOB": [calls(("read_file", {"path": "a.txt"}), prefix="c"), text("alpha")],
        }
    )
    service = await open_loop(tmp_path, opened, model)
    seen: list[ev.LoopEvent] = []
    service.subscribe(seen.append)
    await (await service.submit("PARENT JOB")).result()

    finished = next(e for e in seen if isinstance(e, ev.ToolFinished) and e.id == "p_0")
    assert finished.display is not None
    log = tmp_path / "session" / "tasks" / finished.display["subagent"]["log"]
    resumed = load_history(log)
    assert [e.message.role for e in resumed] == ["user", "assistant", "tool", "assistant"]
    assert resumed[0].message.text == "CHILD JOB"
    run = service.subagent("p_0")
    assert run is not None and shown(run.transcript)[0] == ("turn.started", ("CHILD JOB",))
    again = await open_loop(tmp_path, opened, RoutedModel({}), history=service.history())
    reread = again.subagent("p_0")  # a resumed session reads the child's work from its log
    assert reread is not None and shown(reread.transcript) == shown(run.transcript)


def shown(events: Sequence[ev.LoopEvent]) -> list[tuple[str, object]]:
    """What a transcript draws from a child's events: its turns, answers and tool calls."""
    drawn: list[tuple[str, object]] = []
    for event in events:
        match event:
            case ev.TurnStarted():
                drawn.append((event.type, event.texts))
            case ev.StepCompleted():
                drawn.append((event.type, event.text))
            case ev.ToolStarted() | ev.ToolFinished():
                drawn.append((event.type, event.name))
            case ev.TurnFinished():
                drawn.append((event.type, event.result.type))
    return drawn


async def test_todo_write_replaces_the_plan_and_observers_see_it(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    plan = [
        {"content": "read the code", "status": "completed"},
        {"content": "fix the bug", "status": "in_progress"},
        {"content": "run the tests", "status": "pending"},
    ]
    model = RoutedModel(
        {"PARENT JOB": [calls(("todo_write", {"todos": plan}), prefix="p"), text("planned")]}
    )
    service = await open_loop(tmp_path, opened, model)
    seen: list[ev.LoopEvent] = []
    service.subscribe(seen.append)
    await (await service.submit("PARENT JOB")).result()

    updates = [e for e in seen if isinstance(e, ev.PlanUpdated)]
    assert [item.model_dump() for item in updates[-1].todos] == plan
    assert json.loads(updates[-1].model_dump_json())["type"] == "plan.updated"
    assert [i.content for i in service.snapshot().plan] == [p["content"] for p in plan]
    assert "1 completed, 1 in progress, 1 pending" in tool_results(service)["p_0"].text


async def test_a_resumed_session_keeps_its_last_plan(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    first = [{"content": "one", "status": "pending"}]
    second = [{"content": "one", "status": "completed"}, {"content": "two", "status": "pending"}]
    model = RoutedModel(
        {
            "PARENT JOB": [
                calls(("todo_write", {"todos": first}), prefix="a"),
                calls(("todo_write", {"todos": second}), prefix="b"),
                text("ok"),
            ]
        }
    )
    service = await open_loop(tmp_path, opened, model)
    await (await service.submit("PARENT JOB")).result()
    history = service.history()

    resumed = await open_loop(tmp_path / "again", opened, RoutedModel({}), history=history)

    assert [i.model_dump() for i in resumed.snapshot().plan] == second


async def test_an_invalid_plan_is_an_error_the_model_can_read(
    tmp_path: Path, opened: list[AgentLoopService]
) -> None:
    model = RoutedModel(
        {
            "PARENT JOB": [
                calls(("todo_write", {"todos": [{"content": "x", "status": "maybe"}]}), prefix="p"),
                text("ok"),
            ]
        }
    )
    service = await open_loop(tmp_path, opened, model)
    await (await service.submit("PARENT JOB")).result()
    assert tool_results(service)["p_0"].is_error
    assert service.snapshot().plan == ()
