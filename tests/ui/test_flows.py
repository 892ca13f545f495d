"""Whole flows through the real loop service on the scripted provider, driven by keys."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from tests.ui.real_loop import gated, release, scripted_loop, until
from tui_agent.loop.api import LoopApi
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.view_model import MarkerBlock, RetryBlock, ToolBlock
from tui_agent.ui.widgets.approval_bar import QUIET_S
from tui_agent.vocab import ApprovalMode


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


WAIT_FOR_GO = "while [ ! -e go ]; do sleep 0.05; done"  # runs until the test creates `go`


def shell(command: str) -> dict[str, Any]:
    return {"name": "shell", "arguments": {"command": command}}


def write(path: str, content: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


@asynccontextmanager
async def app_on(
    steps: list[dict[str, Any]],
    workspace: Path,
    approval_mode: ApprovalMode = "yolo",
    holds: dict[int, asyncio.Event] | None = None,
) -> AsyncIterator[tuple[TuiAgentApp, Pilot[None], LoopApi]]:
    loop = await scripted_loop(steps, workspace=workspace, approval_mode=approval_mode, holds=holds)
    app = TuiAgentApp(loop, clock=StepClock())
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            yield app, pilot, loop
    finally:
        await app.loop.close()


class StepClock:
    """Wall time, plus what a test adds: lets the approval box's guard pass without waiting."""

    def __init__(self) -> None:
        self.added = 0.0

    def __call__(self) -> float:
        return time.time() + self.added


async def approval_shown(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, TuiAgentApp) and isinstance(app.clock, StepClock)
    await until(pilot, lambda: bool(app.vm.approvals) and app.approval_bar.display)
    app.clock.added += QUIET_S


async def send(pilot: Pilot[None], text: str, key: str = "enter") -> None:
    """Put the text in the focused input at once (typing it key by key is slower than a tool)."""
    focused = pilot.app.focused
    if isinstance(focused, TextArea):
        focused.insert(text)
    elif isinstance(focused, Input):
        focused.insert_text_at_cursor(text)
    await pilot.press(key)


def roles(loop: LoopApi) -> list[tuple[str, str]]:
    return [(e.message.role, e.message.text.strip()) for e in loop.history()]


def tool_running(app: TuiAgentApp) -> bool:
    return any(row.state == "running" for row in app.vm.tools.values())


def idle_after(app: TuiAgentApp, blocks: int) -> bool:
    return not app.vm.busy and len(app.vm.blocks) >= blocks


def steer_pending(app: TuiAgentApp, text: str) -> bool:
    """The loop took `text` as a steer (it waits for the next drain point)."""
    return any(row.kind == "steer" and row.text == text for row in app.vm.queue)


async def test_steer_lands_after_the_tool_results_and_before_the_next_step(workspace: Path) -> None:
    steps = [{"text": "checking", "tool_calls": [gated("check")]}, {"text": "done"}]
    async with app_on(steps, workspace) as (app, pilot, loop):
        await send(pilot, "go")
        await until(pilot, lambda: tool_running(app))
        await send(pilot, "only the reader", key="ctrl+s")
        await until(pilot, lambda: steer_pending(app, "only the reader"))
        release(workspace, "check")
        await until(pilot, lambda: idle_after(app, 5) and not app.vm.queue)
        assert [role for role, _ in roles(loop)] == [
            "user",
            "assistant",
            "tool",
            "user",
            "assistant",
        ]
        assert roles(loop)[3] == ("user", "only the reader")


async def test_enter_while_running_queues_the_text_and_it_runs_as_the_next_turn(
    workspace: Path,
) -> None:
    hold = asyncio.Event()
    steps = [{"text": "first answer"}, {"text": "second answer"}]
    async with app_on(steps, workspace, holds={0: hold}) as (app, pilot, loop):
        await send(pilot, "first")
        await until(pilot, lambda: app.vm.busy)
        await send(pilot, "second")
        await until(pilot, lambda: [r.text for r in app.vm.queue] == ["second"])
        hold.set()
        await until(pilot, lambda: idle_after(app, 4) and not app.vm.queue)
        assert [text for role, text in roles(loop) if role == "user"] == ["first", "second"]
        assert roles(loop)[-1] == ("assistant", "second answer")


async def test_escape_cancels_a_streaming_answer_and_says_it_was_interrupted(
    workspace: Path,
) -> None:
    steps = [{"text": "a long story that never ends"}]
    async with app_on(steps, workspace, holds={0: asyncio.Event()}) as (app, pilot, _):
        await send(pilot, "talk")
        await until(pilot, lambda: any(b.__class__.__name__ == "TextBlock" for b in app.vm.blocks))
        await pilot.press("escape")
        await until(pilot, lambda: not app.vm.busy)
        last = app.vm.blocks[-1]
        assert isinstance(last, MarkerBlock) and last.kind == "interrupted"


async def test_escape_cancels_a_running_tool(workspace: Path) -> None:
    async with app_on([{"tool_calls": [gated("never")]}], workspace) as (app, pilot, _):
        await send(pilot, "wait")
        await until(pilot, lambda: tool_running(app))
        await pilot.press("escape")
        await until(pilot, lambda: not app.vm.busy)
        tool = next(b for b in app.vm.blocks if isinstance(b, ToolBlock))
        assert tool.state == "aborted"
        assert any(isinstance(b, MarkerBlock) and b.kind == "interrupted" for b in app.vm.blocks)


async def test_delete_stops_one_call_and_the_turn_goes_on(workspace: Path) -> None:
    steps = [
        {"tool_calls": [gated("slow"), shell("echo quick")]},
        {"text": "carried on"},
    ]
    async with app_on(steps, workspace) as (app, pilot, loop):
        await send(pilot, "both")
        await until(pilot, lambda: tool_running(app))
        await pilot.press("ctrl+t")
        slow = next(r.call_id for r in app.vm.tools.values() if "slow" in r.summary)
        while app.tools_pane.highlighted_call_id != slow:
            await pilot.press("down")
        await pilot.press("delete")
        await until(pilot, lambda: idle_after(app, 4))
        assert roles(loop)[-1] == ("assistant", "carried on")
        stopped = next(b for b in app.vm.blocks if isinstance(b, ToolBlock) and b.call_id == slow)
        assert stopped.state == "aborted"


async def test_queued_prompts_can_be_edited_removed_and_promoted_to_a_steer(
    workspace: Path,
) -> None:
    steps = [
        {"text": "working", "tool_calls": [shell(WAIT_FOR_GO)]},
        {"text": "after steer"},
        {"text": "edited turn"},
    ]
    async with app_on(steps, workspace) as (app, pilot, loop):
        await send(pilot, "start")
        await until(pilot, lambda: tool_running(app))
        for text in ("one", "two", "three"):
            await send(pilot, text)
        await until(pilot, lambda: len(app.vm.queue) == 3)
        await pilot.press("ctrl+n", "enter")
        await until(pilot, lambda: app.prompt_input.text == "one")
        app.prompt_input.clear_input()
        await send(pilot, "uno")
        await until(pilot, lambda: app.vm.queue[0].text == "uno")
        # The edit went back in the first place; the pane's selection stayed on "two".
        await pilot.press("ctrl+n", "delete")
        await until(pilot, lambda: [r.text for r in app.vm.queue] == ["uno", "three"])
        await pilot.press("end", "ctrl+s")  # the queue pane still has the focus
        await until(pilot, lambda: [r.kind for r in app.vm.queue] == ["steer", "prompt"])
        (workspace / "go").touch()
        await until(pilot, lambda: idle_after(app, 6) and not app.vm.queue)
        users = [text for role, text in roles(loop) if role == "user"]
        assert users == ["start", "three", "uno"]


async def test_a_queued_prompt_being_edited_is_held_when_the_turn_ends(
    workspace: Path,
) -> None:
    steps = [{"text": "working", "tool_calls": [gated("work")]}, {"text": "done"}, {"text": "ok"}]
    async with app_on(steps, workspace) as (app, pilot, loop):
        await send(pilot, "start")
        await until(pilot, lambda: tool_running(app))
        await send(pilot, "old text")
        await until(pilot, lambda: len(app.vm.queue) == 1)
        await pilot.press("ctrl+n", "enter")
        await until(pilot, lambda: app.prompt_input.text == "old text")
        release(workspace, "work")  # the turn ends while the person edits
        await until(pilot, lambda: idle_after(app, 4))
        assert [t for r, t in roles(loop) if r == "user"] == ["start"]  # not the old text
        app.prompt_input.clear_input()
        await send(pilot, "new text")
        await until(pilot, lambda: [t for r, t in roles(loop) if r == "user"][-1:] == ["new text"])
        await until(pilot, lambda: not app.vm.busy)
    assert [t for r, t in roles(loop) if r == "user"] == ["start", "new text"]


async def test_escape_puts_a_held_queued_prompt_back_in_its_place(workspace: Path) -> None:
    steps = [{"text": "working", "tool_calls": [gated("work")]}, {"text": "done"}]
    async with app_on(steps, workspace) as (app, pilot, _loop):
        await send(pilot, "start")
        await until(pilot, lambda: tool_running(app))
        for text in ("one", "two"):
            await send(pilot, text)
        await until(pilot, lambda: len(app.vm.queue) == 2)
        await pilot.press("ctrl+n", "enter")
        await until(pilot, lambda: [r.text for r in app.vm.queue] == ["two"])
        await pilot.press("escape")
        await until(pilot, lambda: [r.text for r in app.vm.queue] == ["one", "two"])
        assert app.prompt_input.text == ""
        release(workspace, "work")


async def test_approval_y_runs_the_call(workspace: Path) -> None:
    steps = [{"tool_calls": [shell("echo approved > out.txt")]}, {"text": "ok"}]
    async with app_on(steps, workspace, approval_mode="ask") as (app, pilot, _):
        await send(pilot, "write")
        await approval_shown(pilot)
        await pilot.press("y")
        await until(pilot, lambda: idle_after(app, 3))
        assert (workspace / "out.txt").read_text().strip() == "approved"


async def test_approval_a_allows_the_rule_for_later_calls(workspace: Path) -> None:
    steps = [
        {"tool_calls": [write("one.txt", "1")]},
        {"tool_calls": [write("two.txt", "2")]},
        {"text": "ok"},
    ]
    async with app_on(steps, workspace, approval_mode="ask") as (app, pilot, _):
        await send(pilot, "write")
        await approval_shown(pilot)
        asked = {a.request_id for a in app.vm.approvals}
        app.vm.listen(lambda change: asked.update(a.request_id for a in app.vm.approvals))
        await pilot.press("a", "enter")  # always, kept for this session
        await until(pilot, lambda: idle_after(app, 4))
        assert len(asked) == 1  # the second call was allowed without asking
        tools = [b for b in app.vm.blocks if isinstance(b, ToolBlock)]
        assert [(b.summary, b.state) for b in tools] == [("one.txt", "done"), ("two.txt", "done")]


async def test_approval_n_denies_and_the_model_sees_the_reason(workspace: Path) -> None:
    steps = [{"tool_calls": [shell("rm -rf build")]}, {"text": "understood"}]
    async with app_on(steps, workspace, approval_mode="ask") as (app, pilot, loop):
        await send(pilot, "clean")
        await approval_shown(pilot)
        await pilot.press("n")
        await send(pilot, "keep build")
        await until(pilot, lambda: idle_after(app, 3))
        tool_text = next(text for role, text in roles(loop) if role == "tool")
        assert "keep build" in tool_text


async def test_up_recalls_the_last_prompt_of_the_session(workspace: Path) -> None:
    async with app_on([{"text": "hi"}], workspace) as (app, pilot, _):
        await send(pilot, "hello there")
        await until(pilot, lambda: idle_after(app, 2))
        await pilot.press("up")
        assert app.prompt_input.text == "hello there"


async def test_a_persistent_http_500_is_one_retry_line_that_names_the_status(
    workspace: Path,
) -> None:
    error = {"kind": "status", "message": "Internal Server Error", "status": 500}
    steps = [{"error": {**error, "retry_after_s": 0}} for _ in range(3)] + [{"text": "ok"}]
    async with app_on(steps, workspace) as (app, pilot, _):
        await send(pilot, "hi")
        await until(pilot, lambda: idle_after(app, 3))
        retries = [b for b in app.vm.blocks if isinstance(b, RetryBlock)]
        assert len(retries) == 1
        assert (retries[0].status, retries[0].failures) == (500, 3)
        assert retries[0].reason == "HTTP 500 · Internal Server Error"
