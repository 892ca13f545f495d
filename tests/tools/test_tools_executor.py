"""The batch executor: preflight, completion order, normalisation, spill and stop-batch."""

from __future__ import annotations

import asyncio
import logging
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
from tui_agent.tools import EMPTY_OUTPUT, SKIPPED, BatchExecutor, ToolContext
from tui_agent.vocab import (
    Delivery,
    ImagePart,
    TextPart,
    ToolCall,
    ToolResult,
    ToolUpdate,
    user_message,
)


def read_text(path: Path) -> str:
    return path.read_text()


@pytest.fixture(autouse=True)
async def _no_worker_threads() -> None:
    inline_threads()


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


# --- preflight ---------------------------------------------------------------------------------


async def test_an_unknown_tool_is_an_error_result(tmp_path: Path) -> None:
    results = await collect(executor(tmp_path), [call("nope", text="x")])
    assert results[0][1].text == 'Tool "nope" not found'
    assert results[0][1].is_error


async def test_malformed_argument_json_is_an_invalid_args_error(tmp_path: Path) -> None:
    ex = executor(tmp_path, make_tool("echo", echo))
    results = await collect(ex, [ToolCall(id="c1", name="echo", arguments='{"text": "a",}')])
    assert results[0][1].text.startswith(
        'Invalid args for tool "echo": the arguments are not valid JSON'
    )


@pytest.mark.parametrize("raw", ["", "   ", "null"])
async def test_empty_or_null_arguments_mean_no_arguments(tmp_path: Path, raw: str) -> None:
    async def report(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output=f"text={args.text!r}")

    ex = executor(tmp_path, make_tool("probe", report))
    results = await collect(ex, [ToolCall(id="c1", name="probe", arguments=raw)])
    assert results[0][1].text == "text=''"


async def test_arguments_that_are_not_an_object_are_refused(tmp_path: Path) -> None:
    ex = executor(tmp_path, make_tool("echo", echo))
    results = await collect(ex, [ToolCall(id="c1", name="echo", arguments="[1, 2]")])
    assert results[0][1].text == 'Invalid args for tool "echo": the arguments must be a JSON object'


async def test_arguments_failing_the_schema_say_which_field_and_why(tmp_path: Path) -> None:
    ex = executor(tmp_path, make_tool("echo", echo))
    results = await collect(ex, [ToolCall(id="c1", name="echo", arguments='{"text": 5, "x": 1}')])
    text = results[0][1].text
    assert text.startswith('Invalid args for tool "echo": ')
    assert "text: Input should be a valid string" in text
    assert "x: Extra inputs are not permitted" in text


async def test_an_empty_batch_yields_nothing(tmp_path: Path) -> None:
    assert await collect(executor(tmp_path), []) == []


# --- running -----------------------------------------------------------------------------------


async def test_results_come_in_completion_order(tmp_path: Path) -> None:
    gates = Gates()
    ex = executor(tmp_path, make_tool("gated", gates.run))
    calls = [call("gated", "first", text="a"), call("gated", "second", text="b")]
    task = asyncio.create_task(collect(ex, calls))
    await settle()
    assert gates.started() == ["a", "b"]  # independent calls run together
    gates.gate("b").set()
    await settle()
    gates.gate("a").set()
    results = await task
    assert [call_id for call_id, _ in results] == ["second", "first"]


async def test_a_conflicting_write_waits_for_the_earlier_read(tmp_path: Path) -> None:
    gates = Gates()
    ex = executor(tmp_path, make_tool("gated", gates.run))
    calls = [
        call("gated", "r", text="read", path="/a"),
        call("gated", "w", text="write", path="/a", write=True),
    ]
    task = asyncio.create_task(collect(ex, calls))
    await settle()
    assert gates.started() == ["read"]
    gates.gate("read").set()
    gates.gate("write").set()
    await task
    assert gates.log == ["start read", "end read", "start write", "end write"]


async def test_states_go_queued_then_running(tmp_path: Path) -> None:
    recorder = Recorder()
    await collect(
        executor(tmp_path, make_tool("echo", echo)), [call("echo", "c1", text="x")], recorder
    )
    assert recorder.states["c1"] == ["queued", "running"]


async def test_a_tool_that_throws_becomes_a_failed_result(tmp_path: Path) -> None:
    async def boom(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        raise RuntimeError("kaput")

    results = await collect(executor(tmp_path, make_tool("boom", boom)), [call("boom")])
    assert results[0][1].text == 'Tool "boom" failed: kaput'
    assert results[0][1].is_error


async def test_a_tool_that_returns_nothing_is_an_error(tmp_path: Path) -> None:
    async def nothing(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        return None  # type: ignore[return-value]

    results = await collect(executor(tmp_path, make_tool("nothing", nothing)), [call("nothing")])
    assert results[0][1].text == 'Tool "nothing" returned no result.'


async def test_updates_reach_the_caller(tmp_path: Path) -> None:
    async def chatty(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        from tui_agent.vocab import ToolUpdate

        ctx.on_update(ToolUpdate(text="half way"))
        return ToolResult(output="done")

    recorder = Recorder()
    await collect(executor(tmp_path, make_tool("chatty", chatty)), [call("chatty", "c1")], recorder)
    assert [u.text for u in recorder.updates["c1"]] == ["half way"]


async def test_an_observer_that_raises_is_reported_once_and_the_call_still_succeeds(
    tmp_path: Path,
) -> None:
    async def chatty(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        ctx.on_update(ToolUpdate(text="one"))
        ctx.on_update(ToolUpdate(text="two"))
        return ToolResult(output="done")

    class BrokenObserver(Recorder):
        def _update(self, call_id: str, update: ToolUpdate) -> None:
            raise ValueError("the pane is gone")

    reported: list[tuple[str, BaseException]] = []
    base = executor(tmp_path, make_tool("chatty", chatty))
    ex = BatchExecutor(
        base.registry,
        base.workspace,
        base.approvals,
        base.spill_dir,
        abort_grace_s=2.0,
        report=lambda what, error: reported.append((what, error)),
    )
    [(_, result)] = await collect(ex, [call("chatty", "c1")], BrokenObserver())
    assert (result.text, result.is_error) == ("done", False)
    [(what, error)] = reported
    assert what == "showing the progress of chatty failed"
    assert isinstance(error, ValueError)


async def test_by_default_a_failing_observer_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def chatty(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        ctx.on_update(ToolUpdate(text="one"))
        return ToolResult(output="done")

    class BrokenObserver(Recorder):
        def _update(self, call_id: str, update: ToolUpdate) -> None:
            raise ValueError("the pane is gone")

    with caplog.at_level(logging.ERROR):
        await collect(
            executor(tmp_path, make_tool("chatty", chatty)), [call("chatty")], BrokenObserver()
        )
    assert "showing the progress of chatty failed: ValueError('the pane is gone')" in caplog.text


# --- normalisation, note, delivery -------------------------------------------------------------


async def test_empty_output_says_so(tmp_path: Path) -> None:
    results = await collect(executor(tmp_path, make_tool("echo", echo)), [call("echo", text="  ")])
    assert results[0][1].text == EMPTY_OUTPUT


async def test_media_only_output_gets_a_text_companion(tmp_path: Path) -> None:
    async def picture(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output=(ImagePart(media_type="image/png", data="AAAA"),))

    results = await collect(executor(tmp_path, make_tool("picture", picture)), [call("picture")])
    output = results[0][1].output
    assert isinstance(output, tuple)
    assert output[0] == TextPart(text="Tool returned non-text content.")
    assert isinstance(output[1], ImagePart)


async def test_text_parts_are_joined_into_one_string(tmp_path: Path) -> None:
    async def parts(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output=(TextPart(text="a"), TextPart(text="b")))

    results = await collect(executor(tmp_path, make_tool("parts", parts)), [call("parts")])
    assert results[0][1].output == "a\nb"


async def test_the_note_stays_beside_the_output_and_a_blank_note_is_dropped(tmp_path: Path) -> None:
    async def noted(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output="visible", note=args.text)

    ex = executor(tmp_path, make_tool("noted", noted))
    results = dict(
        await collect(
            ex, [call("noted", "n1", text="for the model"), call("noted", "n2", text="  ")]
        )
    )
    assert results["n1"].output == "visible"
    assert results["n1"].note == "for the model"
    assert results["n2"].note is None


async def test_delivery_passes_through(tmp_path: Path) -> None:
    delivery = Delivery(message=user_message("also check the tests"))

    async def delivering(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output="ok", delivery=delivery)

    results = await collect(executor(tmp_path, make_tool("deliver", delivering)), [call("deliver")])
    assert results[0][1].delivery == delivery


# --- spill -------------------------------------------------------------------------------------


async def test_output_over_the_limit_is_spilled_to_a_file_holding_all_of_it(tmp_path: Path) -> None:
    big = "".join(f"line {i}\n" for i in range(10_000)) + "THE END"
    assert len(big) > 50_000

    async def flood(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output=big, note="kept")

    results = await collect(
        executor(tmp_path, make_tool("Lookup Tool", flood)), [call("Lookup Tool", "call/lookup")]
    )
    result = results[0][1]
    assert result.truncated
    assert result.spill is not None
    assert result.spill.total_chars == len(big)
    path = Path(result.spill.output_path)
    assert path.parent == tmp_path / "spill"
    assert path.name.startswith("Lookup_Tool-call_lookup-")
    assert read_text(path) == big
    text = result.text
    assert text.startswith("Tool output exceeded 50000 characters")
    for expected in (
        "tool_name: Lookup Tool",
        "tool_call_id: call/lookup",
        f"output_size_chars: {len(big)}",
        f"output_path: {path}",
        "read_file",
    ):
        assert expected in text
    assert big[:4096] in text
    assert big[-1024:] in text
    assert "line 5000\n" not in text  # the middle stays on disk
    assert result.note == "kept"


@pytest.mark.parametrize(("size", "spilled"), [(50_000, False), (50_001, True)])
async def test_the_spill_limit_is_fifty_thousand_characters(
    tmp_path: Path, size: int, spilled: bool
) -> None:
    async def sized(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output="x" * size)

    results = await collect(executor(tmp_path, make_tool("sized", sized)), [call("sized")])
    assert (results[0][1].spill is not None) is spilled
    assert results[0][1].truncated is spilled


async def test_a_spill_exempt_result_is_left_whole(tmp_path: Path) -> None:
    async def exempt(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output="y" * 60_000, spill_exempt=True)

    results = await collect(executor(tmp_path, make_tool("exempt", exempt)), [call("exempt")])
    assert results[0][1].text == "y" * 60_000
    assert results[0][1].spill is None


async def test_repeated_call_ids_spill_to_distinct_files(tmp_path: Path) -> None:
    async def flood(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output=args.text * 60_000)

    ex = executor(tmp_path, make_tool("flood", flood))
    first = await collect(ex, [call("flood", "same", text="a")])
    second = await collect(ex, [call("flood", "same", text="b")])
    assert first[0][1].spill and second[0][1].spill
    assert first[0][1].spill.output_path != second[0][1].spill.output_path


async def test_an_error_result_stays_an_error_when_spilled(tmp_path: Path) -> None:
    async def loud_failure(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output="e" * 60_000, is_error=True)

    results = await collect(executor(tmp_path, make_tool("loud", loud_failure)), [call("loud")])
    assert results[0][1].is_error and results[0][1].truncated


# --- stop-batch --------------------------------------------------------------------------------


async def test_a_stop_batch_result_skips_the_calls_after_it(tmp_path: Path) -> None:
    gates = Gates()

    async def stopper(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output="stop here", stop_batch_after_this=True)

    ex = executor(tmp_path, make_tool("stopper", stopper), make_tool("gated", gates.run))
    calls = [
        call("stopper", "s", path="/a", write=True),
        call("gated", "later", text="never", path="/a"),  # queued behind the stopper
    ]
    results = dict(await collect(ex, calls))
    assert results["s"].text == "stop here"
    assert results["later"].text == SKIPPED
    assert results["later"].is_error
    assert gates.log == []


async def test_stop_batch_does_not_touch_calls_before_it(tmp_path: Path) -> None:
    gates = Gates()

    async def stopper(args: FakeArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output="stop", stop_batch_after_this=True)

    ex = executor(tmp_path, make_tool("stopper", stopper), make_tool("gated", gates.run))
    calls = [call("gated", "before", text="a", path="/b", write=True), call("stopper", "s")]
    task = asyncio.create_task(collect(ex, calls))
    await settle()
    gates.gate("a").set()
    results = dict(await task)
    assert results["before"].text == "done a"
