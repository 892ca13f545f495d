"""The batch executor when calls stop: abort grace, detached calls, closing, approval waits."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.tools.tool_fakes import (
    FakeArgs,
    Gates,
    Recorder,
    call,
    collect,
    echo,
    executor,
    inline_threads,
    make_tool,
)
from tui_agent.tools import Approvals, ToolAborted, ToolContext
from tui_agent.vocab import AbortSignal, ToolResult


@pytest.fixture(autouse=True)
async def _no_worker_threads() -> None:
    inline_threads()


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


# --- abort -------------------------------------------------------------------------------------


async def stubborn(args: FakeArgs, ctx: ToolContext) -> ToolResult:
    """Ignores its signal; only cancellation stops it."""
    await asyncio.Event().wait()
    return ToolResult(output="unreachable")


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        (
            "user_cancelled",
            'The user manually interrupted "stubborn" (and anything else running at the same '
            "time). Do not retry it unless asked.",
        ),
        (
            "user_stopped_call",
            'The user stopped "stubborn" while it ran; the turn goes on. '
            "Do not retry it unless asked.",
        ),
        ("timeout", 'Tool "stubborn" was aborted'),
    ],
)
async def test_a_running_tool_that_ignores_the_abort_is_reported_after_the_grace(
    tmp_path: Path, reason: str, expected: str
) -> None:
    recorder = Recorder()
    ex = executor(tmp_path, make_tool("stubborn", stubborn), grace=0.01)
    task = asyncio.create_task(collect(ex, [call("stubborn", "c1")], recorder))
    await settle()
    recorder.signals["c1"].abort(reason)
    results = await task
    assert results[0][1].text == expected
    assert results[0][1].is_error
    assert results[0][1].display == {"outcome": "aborted", "reason": reason}


async def test_a_tool_that_finishes_within_the_grace_keeps_its_own_result(tmp_path: Path) -> None:
    async def polite(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        await ctx.signal.wait()
        return ToolResult(output="stopped cleanly, partial work saved")

    ex = executor(tmp_path, make_tool("polite", polite), grace=30)
    signal = AbortSignal()
    task = asyncio.create_task(collect(ex, [call("polite")], signal=signal))
    await settle()
    signal.abort("user_cancelled")
    results = await task
    assert results[0][1].text == "stopped cleanly, partial work saved"


async def test_a_tool_raising_tool_aborted_reports_its_partial_output(tmp_path: Path) -> None:
    async def partial(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        await ctx.signal.wait()
        raise ToolAborted("first half")

    ex = executor(tmp_path, make_tool("partial", partial), grace=30)
    signal = AbortSignal()
    task = asyncio.create_task(collect(ex, [call("partial")], signal=signal))
    await settle()
    signal.abort("user_cancelled")
    text = (await task)[0][1].text
    assert text.startswith('The user manually interrupted "partial"')
    assert text.endswith("Output before it stopped:\nfirst half")


async def test_a_tool_throwing_after_an_abort_is_reported_aborted_not_failed(
    tmp_path: Path,
) -> None:
    async def thrower(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        await ctx.signal.wait()
        raise RuntimeError("interrupted")

    ex = executor(tmp_path, make_tool("thrower", thrower), grace=30)
    signal = AbortSignal()
    task = asyncio.create_task(collect(ex, [call("thrower")], signal=signal))
    await settle()
    signal.abort("other")
    assert (await task)[0][1].text == 'Tool "thrower" was aborted'


async def test_after_an_abort_no_queued_conflicting_tool_starts(tmp_path: Path) -> None:
    gates = Gates()
    ex = executor(tmp_path, make_tool("gated", gates.run), grace=30)
    signal = AbortSignal()
    calls = [
        call("gated", "w1", text="w1", path="/a", write=True),
        call("gated", "w2", text="w2", path="/a", write=True),
    ]
    task = asyncio.create_task(collect(ex, calls, signal=signal))
    await settle()
    signal.abort("user_cancelled")
    await settle()
    gates.gate("w1").set()  # the running one ends within its grace
    results = dict(await task)
    assert gates.started() == ["w1"]
    assert results["w1"].text == "done w1"
    assert results["w2"].text == (
        'The user cancelled the turn before "gated" started, so it did not run. '
        "Do not retry it unless asked."
    )
    assert results["w2"].display == {"outcome": "aborted", "reason": "user_cancelled"}


async def test_a_queued_call_stopped_by_the_user_says_it_never_started(tmp_path: Path) -> None:
    gates = Gates()
    recorder = Recorder()
    ex = executor(tmp_path, make_tool("gated", gates.run), grace=30)
    calls = [
        call("gated", "w1", text="w1", path="/a", write=True),
        call("gated", "w2", text="w2", path="/a", write=True),  # waits for w1's slot
    ]
    task = asyncio.create_task(collect(ex, calls, recorder))
    await settle()
    recorder.signals["w2"].abort("user_stopped_call")
    await settle()
    gates.gate("w1").set()
    results = dict(await task)
    assert gates.started() == ["w1"]
    text = results["w2"].text
    assert text.startswith('The user cancelled "gated" before it started, so it did not run')
    assert "while it ran" not in text


async def test_stopping_one_call_leaves_the_others_running(tmp_path: Path) -> None:
    gates = Gates()
    recorder = Recorder()
    ex = executor(
        tmp_path, make_tool("gated", gates.run), make_tool("stubborn", stubborn), grace=0.01
    )
    task = asyncio.create_task(
        collect(ex, [call("stubborn", "s"), call("gated", "g", text="g")], recorder)
    )
    await settle()
    recorder.signals["s"].abort("user_stopped_call")
    await settle()
    gates.gate("g").set()
    results = dict(await task)
    assert results["s"].text.startswith('The user stopped "stubborn"')
    assert results["g"].text == "done g"


# --- detach ------------------------------------------------------------------------------------


async def test_a_detached_call_frees_its_slot_and_yields_its_final_result_later(
    tmp_path: Path,
) -> None:
    finish = asyncio.Event()
    gates = Gates()

    async def background(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        ctx.detach("started in the background")
        await finish.wait()
        return ToolResult(output="background done")

    recorder = Recorder()
    ex = executor(tmp_path, make_tool("bg", background), make_tool("gated", gates.run))
    calls = [call("bg", "bg", path="/a", write=True), call("gated", "next", text="next", path="/a")]
    task = asyncio.create_task(collect(ex, calls, recorder))
    await settle()
    assert recorder.detached == {"bg": "started in the background"}
    assert gates.started() == ["next"]  # the conflicting call ran while the background one goes on
    gates.gate("next").set()
    await settle()
    assert not task.done()  # the batch waits for the background call's final result
    finish.set()
    results = await task
    assert results == [("next", results[0][1]), ("bg", results[1][1])]
    assert results[1][1].text == "background done"


async def test_closing_the_executor_stops_background_calls(tmp_path: Path) -> None:
    async def forever(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        ctx.detach("bg")
        await ctx.signal.wait()
        raise ToolAborted("")

    ex = executor(tmp_path, make_tool("forever", forever), grace=30)
    task = asyncio.create_task(collect(ex, [call("forever")]))
    await settle()
    await ex.aclose()
    results = await task
    assert results[0][1].text == 'Tool "forever" was aborted'


async def test_closing_the_result_iterator_early_cancels_running_tools(tmp_path: Path) -> None:
    cancelled = asyncio.Event()

    async def watched(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return ToolResult(output="unreachable")

    ex = executor(tmp_path, make_tool("watched", watched), make_tool("echo", echo))
    recorder = Recorder()
    batch = [(c, recorder.context(c.id)) for c in (call("echo", text="quick"), call("watched"))]
    iterator = ex.execute(batch, AbortSignal())
    first = await anext(iterator)
    assert first[1].text == "quick"
    await iterator.aclose()  # type: ignore[attr-defined]
    assert cancelled.is_set()


# --- approval inside the executor ---------------------------------------------------------------


async def test_a_headless_run_denies_a_call_needing_approval_without_running_it(
    tmp_path: Path,
) -> None:
    ran: list[str] = []

    async def risky(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        ran.append("risky")
        return ToolResult(output="did it")

    ex = executor(tmp_path, make_tool("risky", risky, read_only=False), approvals=Approvals("ask"))
    results = await collect(ex, [call("risky", text="rm stuff")])
    assert ran == []
    assert results[0][1].is_error
    assert "--yolo" in results[0][1].text and '"risky"' in results[0][1].text


async def test_a_call_awaiting_approval_reports_that_state(tmp_path: Path) -> None:
    from tui_agent.tools import ApprovalRequest, Decision

    async def ask(request: ApprovalRequest) -> Decision:
        return Decision.once()

    recorder = Recorder()
    ex = executor(
        tmp_path, make_tool("risky", echo, read_only=False), approvals=Approvals("ask", ask=ask)
    )
    await collect(ex, [call("risky", "c1", text="x")], recorder)
    assert recorder.states["c1"] == ["queued", "awaiting_approval", "running"]


async def test_an_abort_while_awaiting_approval_answers_at_once(tmp_path: Path) -> None:
    from tui_agent.tools import ApprovalRequest, Decision

    asked = asyncio.Event()

    async def ask(request: ApprovalRequest) -> Decision:
        asked.set()
        await asyncio.Event().wait()
        return Decision.once()

    ex = executor(
        tmp_path,
        make_tool("risky", echo, read_only=False),
        approvals=Approvals("ask", ask=ask),
        grace=30,
    )
    signal = AbortSignal()
    task = asyncio.create_task(collect(ex, [call("risky", text="x")], signal=signal))
    await asked.wait()
    signal.abort("user_cancelled")
    assert (await task)[0][1].text.startswith('The user cancelled the turn before "risky" started')


@pytest.mark.parametrize(
    ("arguments", "why"),
    [
        ({"path": "a.txt", "old_string": "gamma", "new_string": "x"}, "was not found in a.txt"),
        ({"path": "a.txt", "old_string": "alpha", "new_string": "x"}, "occurs 2 times"),
        ({"path": "gone.txt", "old_string": "alpha", "new_string": "x"}, "File not found"),
    ],
)
async def test_an_edit_that_cannot_apply_fails_before_anyone_is_asked(
    tmp_path: Path, arguments: dict[str, str], why: str
) -> None:
    from tui_agent.tools import ApprovalRequest, Decision, EditFile, Workspace

    asked: list[ApprovalRequest] = []

    async def ask(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision.once()

    ex = executor(tmp_path, approvals=Approvals("ask", ask=ask))
    (tmp_path / "ws" / "a.txt").write_text("alpha\nalpha\n")
    ex.registry.register(EditFile(Workspace(tmp_path / "ws")))
    recorder = Recorder()
    results = await collect(ex, [call("edit_file", "c1", **arguments)], recorder)
    assert asked == []
    assert results[0][1].is_error and why in results[0][1].text
    assert "awaiting_approval" not in recorder.states["c1"]
    assert (tmp_path / "ws" / "a.txt").read_text() == "alpha\nalpha\n"


async def test_an_edit_that_applies_is_still_asked_about(tmp_path: Path) -> None:
    from tui_agent.tools import ApprovalRequest, Decision, EditFile, Workspace

    asked: list[ApprovalRequest] = []

    async def ask(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision.once()

    ex = executor(tmp_path, approvals=Approvals("ask", ask=ask))
    (tmp_path / "ws" / "a.txt").write_text("alpha\n")
    ex.registry.register(EditFile(Workspace(tmp_path / "ws")))
    edit = {"path": "a.txt", "old_string": "alpha", "new_string": "beta"}
    results = await collect(ex, [call("edit_file", "c1", **edit)])
    assert [r.tool_name for r in asked] == ["edit_file"]
    assert not results[0][1].is_error
    assert (tmp_path / "ws" / "a.txt").read_text() == "beta\n"
