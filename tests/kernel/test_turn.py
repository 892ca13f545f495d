"""Turn machine behaviours (docs/loop-spec.md §3 and the turn checklist of §10)."""

from __future__ import annotations

from tests.kernel.fakes import (
    FakeClock,
    Gate,
    ScriptedRunner,
    boom,
    calls,
    empty,
    fail,
    finish,
    gated,
    ok,
    prompt,
    rig,
    settle,
    text,
    think_only,
)
from tui_agent.kernel import (
    AttemptSent,
    AttemptVoided,
    RetryScheduled,
    StepAnswered,
    StepBegun,
    StepFailed,
    StreamPart,
    TurnEnded,
    UsageRecorded,
)
from tui_agent.vocab import (
    ErrorCode,
    FinishReason,
    LLMErrorKind,
    LoopError,
    RequestSent,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
)


async def test_text_only_step_ends_the_turn_done() -> None:
    r = await rig(text("hel", "lo"))
    await r.run("hi")
    assert r.lines() == ["user:hi", "assistant:hello"]
    [ended] = r.of(TurnEnded)
    assert (ended.outcome, ended.steps, ended.turn_id) == ("done", 1, 0)
    assert r.agent.errors == []


async def test_tool_calls_continue_the_turn_even_when_the_finish_says_stop() -> None:
    step = calls(("c1", "echo"), reason=FinishReason.END_TURN)
    r = await rig(step, text("done"), runner=ScriptedRunner(echo=ok("out")))
    await r.run("hi")
    assert r.lines() == ["user:hi", "assistant:[c1]", "tool:out", "assistant:done"]


async def test_stream_parts_are_emitted_in_order_with_step_and_attempt() -> None:
    r = await rig(text("a", "b"))
    await r.run("hi")
    parts = [e.event.text for e in r.of(StreamPart) if isinstance(e.event, TextDelta)]
    assert parts == ["a", "b"]
    assert r.of(StepBegun)[0].step == 1
    assert r.of(AttemptSent)[0].attempt == 1


async def test_retry_keeps_the_step_and_a_new_llm_step_after_tools_increments_it() -> None:
    r = await rig(fail(), calls(("c1", "echo")), text("ok"), runner=ScriptedRunner(echo=ok("x")))
    await r.run("hi")
    assert [e.step for e in r.of(StepBegun)] == [1, 2]
    assert [(e.step, e.attempt) for e in r.of(AttemptSent)] == [(1, 1), (1, 2), (2, 1)]


async def test_retries_walk_through_empty_think_only_and_remote_failures() -> None:
    r = await rig(
        empty(),
        think_only(),
        fail(LLMErrorKind.RATE_LIMIT, 429),
        fail(),
        fail(LLMErrorKind.PROVIDER, None),
        text("ok"),
        max_attempts_per_step=6,
    )
    await r.run("hi")
    retries = r.of(RetryScheduled)
    assert [e.failed_attempt for e in retries] == [1, 2, 3, 4, 5]
    assert r.requester.calls == 6
    assert "(no content, no tool calls)" in retries[0].error.message
    assert "only thinking content" in retries[1].error.message
    assert retries[0].error.message.endswith("Provider: test, model: test-model")
    assert [e.error.kind for e in retries[2:]] == ["rate_limit", "status", "provider"]
    assert r.of(TurnEnded)[0].outcome == "done"


async def test_failures_beyond_max_attempts_fail_the_turn_with_the_last_error() -> None:
    r = await rig(fail(status=503), fail(status=503), fail(status=503), max_attempts_per_step=3)
    await r.run("hi")
    assert len(r.of(RetryScheduled)) == 2
    assert r.requester.calls == 3
    [ended] = r.of(TurnEnded)
    assert ended.outcome == "failed" and ended.error is not None
    assert ended.error.code == "llm.status"
    assert len(r.of(StepFailed)) == 1


async def test_non_retryable_failure_fails_at_once() -> None:
    r = await rig(fail(LLMErrorKind.REQUEST_STRUCTURE, 400))
    await r.run("hi")
    assert r.requester.calls == 1 and r.of(RetryScheduled) == []
    assert r.of(TurnEnded)[0].outcome == "failed"


async def test_filtered_empty_response_is_not_retried() -> None:
    r = await rig([RequestSent(), finish(FinishReason.FILTERED, "content_filter")])
    await r.run("hi")
    [ended] = r.of(TurnEnded)
    assert ended.outcome == "failed" and r.requester.calls == 1
    assert ended.error is not None and ended.error.code == ErrorCode.EMPTY_RESPONSE


async def test_retry_after_sets_the_delay_exactly() -> None:
    r = await rig(
        fail(LLMErrorKind.RATE_LIMIT, 429, retry_after_s=2.0), text("ok"), clock=FakeClock()
    )
    await r.agent.submit(prompt("hi"))
    await settle()
    assert r.of(RetryScheduled)[0].delay_s == 2.0
    assert r.agent.turn_state == "retrying"
    await r.clock.advance(2.0)
    await r.agent.idle()
    assert r.lines()[-1] == "assistant:ok"


async def test_backoff_delay_without_retry_after_starts_at_half_a_second() -> None:
    r = await rig(fail(), text("ok"), clock=FakeClock())
    await r.agent.submit(prompt("hi"))
    await settle()
    assert r.clock.delays == [0.5]


async def test_a_persistent_server_error_gives_up_when_the_waits_reach_the_budget() -> None:
    clock = FakeClock(auto=True)
    r = await rig(*[fail()] * 20, clock=clock, max_attempts_per_step=100)
    await r.run("hi")
    assert sum(clock.delays) == 60.0 and r.requester.calls == 8
    [ended] = r.of(TurnEnded)
    assert ended.outcome == "failed" and ended.error is not None
    assert ended.error.code == "llm.status"


async def test_an_unreachable_server_fails_after_three_attempts() -> None:
    r = await rig(*[fail(LLMErrorKind.UNREACHABLE, None)] * 5)
    await r.run("hi")
    assert r.requester.calls == 3
    assert [e.max_attempts for e in r.of(RetryScheduled)] == [3, 3]


async def test_a_retry_after_longer_than_a_minute_fails_at_once_saying_when() -> None:
    r = await rig(fail(LLMErrorKind.RATE_LIMIT, 429, message="slow down", retry_after_s=100_000))
    await r.run("hi")
    assert r.requester.calls == 1 and r.of(RetryScheduled) == []
    [failed] = r.of(StepFailed)
    assert failed.error.message.startswith("slow down (retry after ")
    assert r.of(TurnEnded)[0].error == failed.error


async def test_quota_exhausted_with_retry_after_is_not_retried() -> None:
    r = await rig(fail(LLMErrorKind.QUOTA, 429, retry_after_s=5))
    await r.run("hi")
    assert r.requester.calls == 1 and r.of(TurnEnded)[0].outcome == "failed"


async def test_requester_exception_becomes_an_unknown_llm_error() -> None:
    r = await rig([RequestSent(), TextDelta(text="x"), RuntimeError("kaput")])
    await r.run("hi")
    [ended] = r.of(TurnEnded)
    assert ended.outcome == "failed" and ended.error is not None
    assert ended.error.code == "llm.unknown" and "kaput" in ended.error.message
    assert r.lines() == ["user:hi"]
    assert r.agent.errors == []


async def test_retry_discards_partial_output_and_never_leaks_it() -> None:
    partial = [RequestSent(), TextDelta(text="half"), *fail()[1:]]
    r = await rig(partial, text("whole"))
    await r.run("hi")
    assert r.lines() == ["user:hi", "assistant:whole"]
    assert len(r.of(AttemptVoided)) == 1


async def test_retry_rolls_back_claimed_ids_so_the_tool_runs_once_under_its_id() -> None:
    partial = [RequestSent(), ToolCallDelta(index=0, id="call-1", name="echo"), *fail()[1:]]
    runner = ScriptedRunner(echo=ok("x"))
    r = await rig(partial, calls(("call-1", "echo")), text("done"), runner=runner)
    await r.run("hi")
    assert runner.runs == ["call-1"]
    assert r.lines()[1] == "assistant:[call-1]"


async def test_second_request_sent_inside_one_attempt_voids_the_first_stream() -> None:
    r = await rig(
        [RequestSent(), TextDelta(text="lost"), RequestSent(), TextDelta(text="kept"), finish()]
    )
    await r.run("hi")
    assert r.lines()[-1] == "assistant:kept"
    assert len(r.of(AttemptVoided)) == 1


async def test_duplicate_call_ids_in_one_response_are_renamed_with_the_raw_id_kept() -> None:
    runner = ScriptedRunner(echo=ok("x"))
    r = await rig(calls(("call-1", "echo"), ("call-1", "echo")), text("ok"), runner=runner)
    await r.run("hi")
    call = r.agent.history[1].message.tool_calls
    assert [c.id for c in call] == ["call-1", "call-1__2"]
    assert call[1].raw_id == "call-1"
    assert [e.message.tool_call_id for e in r.agent.history[2:4]] == ["call-1", "call-1__2"]


async def test_reused_call_ids_in_later_steps_keep_growing() -> None:
    runner = ScriptedRunner(echo=ok("x"))
    r = await rig(
        calls(("call-1", "echo"), ("call-1", "echo")),
        calls(("call-1", "echo")),
        calls(("call-1", "echo")),
        text("ok"),
        runner=runner,
    )
    await r.run("hi")
    assert runner.runs == ["call-1", "call-1__2", "call-1__3", "call-1__4"]


async def test_usage_is_in_the_assistant_entry_before_tools_run() -> None:
    usage = TokenUsage(input_other=100, output=5, input_cache_read=20, input_cache_creation=10)
    gate = Gate()
    r = await rig(
        calls(("c1", "slow"), usage=usage), text("ok"), runner=ScriptedRunner(slow=gated(gate, "x"))
    )
    await r.agent.submit(prompt("hi"))
    await settle()
    [completed] = r.of(StepAnswered)
    assert completed.entry.meta.usage == usage
    assert r.of(UsageRecorded)[0].usage == usage
    gate.open()
    await r.agent.idle()


async def test_tool_results_enter_history_in_call_order_not_completion_order() -> None:
    slow_gate = Gate()
    runner = ScriptedRunner(slow=gated(slow_gate, "slow"), fast=ok("fast"))
    r = await rig(calls(("a", "slow"), ("b", "fast")), text("ok"), runner=runner)
    await r.agent.submit(prompt("hi"))
    await settle()
    assert runner.runs == ["a", "b"]  # both started together
    slow_gate.open()
    await r.agent.idle()
    assert r.lines() == ["user:hi", "assistant:[a,b]", "tool:slow", "tool:fast", "assistant:ok"]


async def test_failed_tool_enters_history_as_its_error_text() -> None:
    r = await rig(
        calls(("call-1", "bad")), text("recovered"), runner=ScriptedRunner(bad=boom("boom"))
    )
    await r.run("hi")
    assert r.lines() == ["user:hi", "assistant:[call-1]", "tool:boom", "assistant:recovered"]
    tool = r.agent.history[2]
    assert tool.message.is_error and tool.message.tool_call_id == "call-1"
    assert tool.meta.source == "tool"


async def test_failing_and_succeeding_tools_both_run_in_call_order() -> None:
    r = await rig(
        calls(("a", "bad"), ("b", "good")),
        text("ok"),
        runner=ScriptedRunner(bad=boom("nope"), good=ok("yes")),
    )
    await r.run("hi")
    assert r.lines()[2:4] == ["tool:nope", "tool:yes"]


async def test_unknown_tool_name_and_malformed_arguments_yield_error_results() -> None:
    r = await rig(
        calls(("a", "missing", "{not json"), ("b", "echo", '{"x": ')),
        text("ok"),
        runner=ScriptedRunner(echo=ok("echoed")),
    )
    await r.run("hi")
    assert r.lines()[2] == "tool:unknown tool: missing"
    assert r.agent.history[1].message.tool_calls[1].arguments == '{"x": '
    assert r.agent.errors == []


async def test_max_steps_fails_the_turn_with_a_loop_error() -> None:
    runner = ScriptedRunner(echo=ok("x"))
    endless = [calls((f"c{i}", "echo")) for i in range(10)]
    r = await rig(*endless, runner=runner, max_steps=2)
    await r.run("hi")
    [ended] = r.of(TurnEnded)
    assert ended.outcome == "failed"
    assert isinstance(ended.error, LoopError)
    assert ended.error.code == "loop.max_steps_exceeded"
    assert ended.error.details == {"max_steps": 2}
    assert runner.runs == ["c0", "c1"]


async def test_text_split_across_think_and_text_keeps_both_parts() -> None:
    from tui_agent.vocab import ThinkDelta

    r = await rig([RequestSent(), ThinkDelta(text="plan"), TextDelta(text="answer"), finish()])
    await r.run("hi")
    entry = r.agent.history[-1]
    assert entry.message.thinking == "plan" and entry.message.text == "answer"


async def test_one_retry_reports_attempts_limit_and_delay() -> None:
    r = await rig(fail(), text("ok"), max_attempts_per_step=3)
    await r.run("hi")
    [retry] = r.of(RetryScheduled)
    assert (retry.failed_attempt, retry.next_attempt, retry.max_attempts) == (1, 2, 3)
    assert retry.delay_s == 0.5 and retry.error.status == 500
    assert r.of(StepFailed) == [] and r.of(TurnEnded)[0].outcome == "done"
