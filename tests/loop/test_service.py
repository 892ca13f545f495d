"""AgentLoopService behaviour (docs/loop-spec.md §5), driven by a fake model and the real kernel."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from tests.loop.conftest import LoopMaker
from tests.support.fake_model import Step, calls, fail, text
from tui_agent.context import INTERRUPTED_ANSWER, fold, project, read_log
from tui_agent.loop import events as ev
from tui_agent.loop.hooks import Next
from tui_agent.loop.service import (
    ErrorContext,
    LoopErrorHandler,
    LoopOptions,
    PromptContext,
    StepBeginContext,
    StepDoneContext,
)
from tui_agent.tools import Tool, ToolContext
from tui_agent.vocab import (
    Delivery,
    FinishReason,
    LLMErrorKind,
    TextDelta,
    ToolResult,
    TurnError,
    user_message,
)


def recorder(service: Any) -> list[ev.LoopEvent]:
    seen: list[ev.LoopEvent] = []
    service.subscribe(seen.append)
    return seen


def of_type(events: list[ev.LoopEvent], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def held(step: Step) -> tuple[Step, asyncio.Event]:
    gate = asyncio.Event()
    step.hold = gate
    return step, gate


async def until(predicate: Any) -> None:
    """Wait until the loop's observable state satisfies `predicate` (the cap only turns a hang
    into a failure that names this wait; nothing is expected to take long)."""
    async with asyncio.timeout(30):
        while not predicate():  # noqa: ASYNC110 - the state has no event of its own to wait on
            await asyncio.sleep(0.005)


async def test_a_text_prompt_completes_in_one_step_with_events_in_order(
    make_loop: LoopMaker,
) -> None:
    service, _model, _ = await make_loop([text("Hello there.")])
    seen = recorder(service)
    handle = await service.submit("say hi")
    result = await handle.result()
    assert result.type == "completed" and result.steps == 1
    kinds = [e.type for e in seen if not isinstance(e, ev.MachineTransition)]
    assert kinds[0] == "turn.started" and kinds[1] == "step.started"
    assert kinds[-1] == "turn.finished"
    assert kinds.index("step.completed") < kinds.index("turn.finished")
    assert "".join(e.text for e in of_type(seen, ev.AssistantDelta)) == "Hello there."
    assert of_type(seen, ev.TurnFinished)[0].text == "Hello there."
    assert handle.state == "completed"


async def test_submit_while_running_queues_and_runs_as_the_next_turn(
    make_loop: LoopMaker,
) -> None:
    first, gate = held(text("first answer"))
    service, model, _ = await make_loop([first, text("second answer")])
    seen = recorder(service)
    one = await service.submit("one")
    await until(lambda: len(model.requests) == 1)
    two = await service.submit("two")
    assert of_type(seen, ev.PromptQueued)[0].prompt_id == two.id
    assert [q.text for q in service.snapshot().queue] == ["two"]
    gate.set()
    assert (await one.result()).type == "completed"
    assert (await two.result()).type == "completed"
    assert [m.text for m in model.requests[1].messages] == ["one", "first answer", "two"]


async def test_steer_lands_after_the_tool_results_and_before_the_next_step(
    make_loop: LoopMaker,
) -> None:
    step, gate = held(calls(("read_file", {"path": "a.txt"})))
    service, model, _ = await make_loop([step, text("done")])
    handle = await service.submit("read a")
    await until(lambda: len(model.requests) == 1)
    steer = await service.submit("also mention beta", steer_if_active=True)
    assert steer.state == "steered"
    gate.set()
    assert (await handle.result()).type == "completed"
    roles = [(m.role, m.text) for m in model.requests[1].messages]
    assert [r for r, _ in roles] == ["user", "assistant", "tool", "user"]
    assert roles[-1][1] == "also mention beta"
    assert (await steer.result()).type == "completed"


async def test_cancel_while_streaming_salvages_the_partial_text(make_loop: LoopMaker) -> None:
    step = Step([TextDelta(text="partial answ")])
    step.hold = asyncio.Event()
    service, _model, log_path = await make_loop([step])
    seen = recorder(service)
    handle = await service.submit("write a story")
    await until(lambda: of_type(seen, ev.AssistantDelta))
    assert await service.cancel()
    result = await handle.result()
    assert result.type == "cancelled" and result.reason == "user_cancelled"
    assert service.history()[-1].message.text == "partial answ"
    assert service.history()[-1].meta.source == "salvaged"
    await service.settled()
    await service.close()
    records = read_log(log_path)
    assert [r.finish_reason for r in records if r.type == "step.end"] == [FinishReason.INTERRUPTED]
    assert [e.message.text for e in fold(records)] == ["write a story", "partial answ"]


async def test_the_next_request_tells_the_model_its_cut_answer_was_interrupted(
    make_loop: LoopMaker,
) -> None:
    step = Step([TextDelta(text="partial answ")])
    step.hold = asyncio.Event()
    service, model, log_path = await make_loop([step, text("ok"), text("ok again")])
    seen = recorder(service)
    first = await service.submit("write a story")
    await until(lambda: of_type(seen, ev.AssistantDelta))
    assert await service.cancel()
    await first.result()
    await (await service.submit("shorter, please")).result()
    said = [(m.role, m.text) for m in model.requests[1].messages]
    assert said == [
        ("user", "write a story"),
        ("assistant", f"partial answ\n\n{INTERRUPTED_ANSWER}"),
        ("user", "shorter, please"),
    ]
    assert service.history()[1].message.text == "partial answ"  # the transcript keeps its words
    await service.close()
    # A resumed session tells the model the same: the log says the answer was cut off.
    resumed = project(fold(read_log(log_path)))
    assert resumed[1].text == f"partial answ\n\n{INTERRUPTED_ANSWER}"


async def test_cancel_during_a_running_tool_pairs_an_aborted_result(
    make_loop: LoopMaker, workspace: Path
) -> None:
    shell = calls(("shell", {"command": "sleep 30"}))
    service, _model, log_path = await make_loop([shell])
    seen = recorder(service)
    handle = await service.submit("sleep")
    await until(lambda: any(e.state == "running" for e in of_type(seen, ev.ToolStateChanged)))
    await service.cancel()
    assert (await handle.result()).type == "cancelled"
    await service.close()
    history = fold(read_log(log_path))
    assert [e.message.role for e in history] == ["user", "assistant", "tool"]
    assert history[-1].message.is_error
    assert "interrupted" in history[-1].message.text.lower()


async def test_cancelling_a_queued_prompt_removes_it_before_it_runs(
    make_loop: LoopMaker,
) -> None:
    first, gate = held(text("first"))
    service, model, _ = await make_loop([first, text("never")])
    one = await service.submit("one")
    await until(lambda: len(model.requests) == 1)
    two = await service.submit("two")
    assert await service.cancel(two.id)
    gate.set()
    await one.result()
    assert (await two.result()).type == "cancelled"
    await service.settled()
    assert len(model.requests) == 1


async def test_cancel_tool_stops_one_call_and_the_turn_goes_on(make_loop: LoopMaker) -> None:
    service, model, _ = await make_loop(
        [
            calls(("shell", {"command": "sleep 30"}), ("read_file", {"path": "a.txt"})),
            text("carried on"),
        ]
    )
    seen = recorder(service)
    handle = await service.submit("go")
    await until(
        lambda: any(
            e.state == "running" and e.name == "shell" for e in of_type(seen, ev.ToolStateChanged)
        )
    )
    assert await service.cancel_tool("call_0")
    result = await handle.result()
    assert result.type == "completed" and result.steps == 2
    tool_texts = [m.text for m in model.requests[1].messages if m.role == "tool"]
    assert "stopped" in tool_texts[0] and "alpha" in tool_texts[1]


async def test_the_step_gate_runs_before_every_attempt_including_retries(
    make_loop: LoopMaker,
) -> None:
    service, _model, _ = await make_loop(
        [fail(LLMErrorKind.OVERLOADED, retry_after_s=0.01), text("ok")]
    )
    gated: list[int] = []

    async def count(ctx: StepBeginContext, next_: Next[StepBeginContext]) -> None:
        gated.append(ctx.step)
        await next_(None)

    service.on_will_begin_step.register("count", count)
    assert (await (await service.submit("hi")).result()).type == "completed"
    assert gated == [1, 1]


async def test_a_failing_step_hook_fails_the_turn(make_loop: LoopMaker) -> None:
    service, model, _ = await make_loop([text("never sent")])

    async def broken(ctx: StepBeginContext, next_: Next[StepBeginContext]) -> None:
        raise RuntimeError("hook exploded")

    service.on_will_begin_step.register("broken", broken)
    result = await (await service.submit("hi")).result()
    assert result.type == "failed" and result.error is not None
    assert result.error["code"] == "loop.handler_failed"
    assert "hook exploded" in result.error["message"]
    assert model.requests == []


async def test_an_after_step_hook_can_stop_the_turn(make_loop: LoopMaker) -> None:
    service, model, _ = await make_loop([calls(("read_file", {"path": "a.txt"})), text("never")])

    async def stop(ctx: StepDoneContext, next_: Next[StepDoneContext]) -> None:
        ctx.stop_turn = True
        await next_(None)

    service.on_did_finish_step.register("stop", stop)
    result = await (await service.submit("go")).result()
    assert result.type == "completed"
    assert len(model.requests) == 1


class _NoArgs(BaseModel):
    pass


class StopTool(Tool[_NoArgs]):
    name: ClassVar[str] = "finish_task"
    description: ClassVar[str] = "Ends the turn."
    Args = _NoArgs
    read_only: ClassVar[bool] = True

    async def execute(self, args: _NoArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output="finished", stop_turn=True, stop_turn_reason="task finished")


class DeliverTool(Tool[_NoArgs]):
    name: ClassVar[str] = "ask_user"
    description: ClassVar[str] = "Delivers a user message."
    Args = _NoArgs
    read_only: ClassVar[bool] = True

    async def execute(self, args: _NoArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(
            output="asked",
            delivery=Delivery(message=user_message("the user says: use tabs")),
        )


async def test_a_tool_stop_turn_completes_the_turn_with_its_reason(make_loop: LoopMaker) -> None:
    service, model, _ = await make_loop(
        [calls(("finish_task", {})), text("never")], tools=(StopTool(),)
    )
    result = await (await service.submit("go")).result()
    assert result.type == "completed" and result.stop_reason == "task finished"
    assert len(model.requests) == 1


async def test_a_tool_delivery_is_steered_into_the_running_turn(make_loop: LoopMaker) -> None:
    service, model, _ = await make_loop(
        [calls(("ask_user", {})), text("ok, tabs")], tools=(DeliverTool(),)
    )
    result = await (await service.submit("format it")).result()
    assert result.type == "completed"
    texts = [m.text for m in model.requests[1].messages]
    assert texts[-1] == "the user says: use tabs"


async def test_a_delivery_is_the_one_result_the_after_tool_hook_waits_for(
    make_loop: LoopMaker,
) -> None:
    """Every other result is finished at once (`executing -> succeeded`); a delivery's
    re-submission is awaited in `finishing`, before the result reaches the turn."""
    service, _model, _ = await make_loop(
        [calls(("ask_user", {})), text("ok, tabs")], tools=(DeliverTool(),)
    )
    seen = recorder(service)
    await (await service.submit("format it")).result()
    moves = [
        (e.source, e.target) for e in of_type(seen, ev.MachineTransition) if e.machine == "tool"
    ]
    assert moves == [("", "executing"), ("executing", "finishing"), ("finishing", "succeeded")]


async def test_the_first_matching_error_handler_can_retry_the_turn(make_loop: LoopMaker) -> None:
    service, _model, _ = await make_loop([fail(LLMErrorKind.AUTH, "bad key"), text("recovered")])
    handled: list[str] = []

    async def refresh(ctx: ErrorContext) -> bool:
        handled.append(ctx.error.code)
        ctx.retry()
        return True

    async def never(ctx: ErrorContext) -> bool:
        raise AssertionError("only the first match runs")

    def is_auth(error: TurnError) -> bool:
        return error.code == "llm.auth"

    service.register_loop_error_handler(LoopErrorHandler("refresh", is_auth, refresh))
    service.register_loop_error_handler(LoopErrorHandler("never", is_auth, never))
    result = await (await service.submit("hi")).result()
    assert result.type == "completed"
    assert handled == ["llm.auth"]


async def test_an_error_handler_that_throws_fails_the_turn_with_its_error(
    make_loop: LoopMaker,
) -> None:
    service, _model, _ = await make_loop([fail(LLMErrorKind.AUTH, "bad key")])

    async def explode(ctx: ErrorContext) -> bool:
        raise RuntimeError("handler broke")

    service.register_loop_error_handler(LoopErrorHandler("x", lambda e: True, explode))
    result = await (await service.submit("hi")).result()
    assert result.type == "failed" and result.error is not None
    assert result.error["code"] == "loop.handler_failed"


async def test_running_out_of_steps_fails_with_max_steps_exceeded(make_loop: LoopMaker) -> None:
    endless = [calls(("read_file", {"path": "a.txt"}), prefix=f"c{i}") for i in range(5)]
    service, model, _ = await make_loop(endless, options=LoopOptions(max_steps=2))
    result = await (await service.submit("loop")).result()
    assert result.type == "failed" and result.error is not None
    assert result.error["code"] == "loop.max_steps_exceeded"
    assert len(model.requests) == 2


async def test_a_filtered_response_fails_the_turn(make_loop: LoopMaker) -> None:
    service, _model, _ = await make_loop([text("partial", finish=FinishReason.FILTERED)])
    result = await (await service.submit("hi")).result()
    assert result.type == "failed" and result.error is not None
    assert result.error["code"] == "loop.provider_filtered"


async def test_a_max_tokens_stop_completes_as_truncated(make_loop: LoopMaker) -> None:
    service, _model, _ = await make_loop([text("cut sh", finish=FinishReason.MAX_TOKENS)])
    result = await (await service.submit("hi")).result()
    assert result.type == "completed" and result.truncated


async def test_an_approval_request_waits_for_the_user_and_runs_once_approved(
    make_loop: LoopMaker, workspace: Path
) -> None:
    write = calls(("write_file", {"path": "new.txt", "content": "hi\n"}))
    service, _model, _ = await make_loop([write, text("written")], approval_mode="ask")
    seen = recorder(service)
    handle = await service.submit("write it")
    await until(lambda: of_type(seen, ev.ApprovalRequested))
    request = of_type(seen, ev.ApprovalRequested)[0]
    assert request.name == "write_file" and "new.txt" in request.preview
    assert service.snapshot().tools[0].state == "awaiting_approval"
    await service.answer_approval(request.request_id, "once")
    assert (await handle.result()).type == "completed"
    assert (workspace / "new.txt").read_text() == "hi\n"


async def test_a_denied_approval_tells_the_model_the_reason(
    make_loop: LoopMaker, workspace: Path
) -> None:
    shell = calls(("shell", {"command": "rm -rf build"}))
    service, model, _ = await make_loop([shell, text("ok")], approval_mode="ask")
    seen = recorder(service)
    handle = await service.submit("clean")
    await until(lambda: of_type(seen, ev.ApprovalRequested))
    request = of_type(seen, ev.ApprovalRequested)[0]
    await service.answer_approval(request.request_id, "deny", "keep the build folder")
    await handle.result()
    tool_text = next(m.text for m in model.requests[1].messages if m.role == "tool")
    assert "denied" in tool_text and "keep the build folder" in tool_text


async def test_the_event_log_folds_back_into_the_same_history(make_loop: LoopMaker) -> None:
    service, _model, log_path = await make_loop(
        [
            calls(("read_file", {"path": "a.txt"}), ("glob", {"pattern": "*"}), say="Looking."),
            text("All done."),
        ]
    )
    await (await service.submit("look around")).result()
    await service.settled()
    live = project(service.history())
    await service.close()
    assert project(fold(read_log(log_path))) == live


async def test_usage_is_reported_per_step_and_summed(make_loop: LoopMaker) -> None:
    service, _model, _ = await make_loop(
        [calls(("read_file", {"path": "a.txt"})), text("done", usage=7)]
    )
    seen = recorder(service)
    await (await service.submit("go")).result()
    usages = of_type(seen, ev.UsageChanged)
    assert len(usages) == 2
    assert usages[-1].total.output == 10 + 7


async def test_compact_on_demand_replaces_older_history_with_a_summary(
    make_loop: LoopMaker,
) -> None:
    service, model, log_path = await make_loop(
        [
            text("First answer."),
            text("Second answer."),
            text("SUMMARY: two greetings."),
            text("Third answer."),
        ]
    )
    await (await service.submit("first")).result()
    await (await service.submit("second")).result()
    seen = recorder(service)
    await service.compact()
    assert of_type(seen, ev.Compacted)
    await (await service.submit("third")).result()
    sent = json.dumps([m.model_dump() for m in model.requests[-1].messages])
    assert "SUMMARY: two greetings." in sent and "First answer." not in sent
    await service.close()
    assert "SUMMARY: two greetings." in json.dumps(
        [e.model_dump() for e in fold(read_log(log_path))]
    )


async def test_a_prompt_hook_can_rewrite_or_block_a_prompt_before_it_enters_history(
    make_loop: LoopMaker,
) -> None:
    service, model, _ = await make_loop([text("ok")])

    async def redact(ctx: PromptContext, next_: Next[PromptContext]) -> None:
        if "block me" in ctx.message.text:
            ctx.block = True
        else:
            ctx.message = user_message(ctx.message.text.replace("hunter2", "[redacted]"))
        await next_(None)

    service.on_before_submit_prompt.register("redact", redact)
    blocked = await service.submit("block me")
    assert (await blocked.result()).reason == "blocked" and blocked.state == "blocked"
    passed = await service.submit("my password is hunter2")
    assert (await passed.result()).type == "completed"
    assert [m.text for m in model.requests[0].messages] == ["my password is [redacted]"]
    assert "block me" not in [e.message.text for e in service.history()]


async def test_an_error_handler_registered_before_another_is_tried_first(
    make_loop: LoopMaker,
) -> None:
    service, _model, _ = await make_loop([fail(LLMErrorKind.AUTH, "bad key")])
    tried: list[str] = []

    def handler(name: str) -> LoopErrorHandler:
        async def handle(ctx: ErrorContext) -> bool:
            tried.append(name)
            return False

        return LoopErrorHandler(name, lambda error: True, handle)

    service.register_loop_error_handler(handler("late"))
    service.register_loop_error_handler(handler("early"), before="late")
    result = await (await service.submit("hi")).result()
    assert result.type == "failed" and result.error is not None
    assert result.error["code"] == "llm.auth"  # a declining handler keeps the original error
    assert tried == ["early"]
