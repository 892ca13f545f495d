"""Agent machine behaviours (docs/loop-spec.md §2 and the agent checklist of §10)."""

from __future__ import annotations

from tests.kernel.fakes import (
    FakeClock,
    Gate,
    ScriptedRunner,
    calls,
    detaching,
    fail,
    gated,
    hang_forever,
    hang_until_aborted,
    note,
    ok,
    prompt,
    rig,
    settle,
    text,
)
from tui_agent.kernel import (
    AbortBegun,
    GateVerdict,
    InputsDrained,
    PromptBlocked,
    PromptGateFailed,
    SteerMerged,
    ToolDetached,
    ToolRunContext,
    ToolSettled,
    TurnEnded,
    TurnOpened,
)
from tui_agent.vocab import (
    EntryMeta,
    Finish,
    FinishReason,
    HistoryEntry,
    LLMErrorKind,
    Message,
    MessageIdReported,
    RequestSent,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolCallDelta,
    ToolResult,
    UsageReported,
    error_result,
    user_message,
)


async def test_two_prompts_run_as_two_turns_with_monotonic_ids() -> None:
    r = await rig(text("one"), text("two"))
    await r.run("a")
    await r.run("b")
    ended = r.of(TurnEnded)
    assert [e.turn_id for e in ended] == [0, 1]
    assert r.lines() == ["user:a", "assistant:one", "user:b", "assistant:two"]
    assert r.agent.next_turn_id == 2


async def test_prompts_queued_mid_turn_open_one_next_turn_in_fifo_order() -> None:
    gate = Gate()
    r = await rig([RequestSent(), gate, TextDelta(text="first"), *text()[-1:]], text("second"))
    await r.agent.submit(prompt("p0", "p0"))
    await settle()
    for i in (1, 2, 3):
        await r.agent.submit(prompt(f"q{i}", f"p{i}"))
    assert [e.meta.prompt_id for e in r.agent.queue] == ["p1", "p2", "p3"]
    gate.open()
    await r.agent.idle()
    started = r.of(TurnOpened)
    assert len(started) == 2
    assert [e.message.text for e in started[1].entries] == ["q1", "q2", "q3"]
    assert r.lines()[2:] == ["user:q1", "user:q2", "user:q3", "assistant:second"]


async def test_submitted_meta_is_kept_in_history() -> None:
    r = await rig(text("ok"))
    meta = EntryMeta(source="input", prompt_id="p1", created_at=12.5)
    await r.agent.submit(HistoryEntry(message=user_message("hi"), meta=meta))
    await r.agent.idle()
    assert r.agent.history[0].meta == meta


async def test_llm_failure_leaves_history_with_the_prompt_and_the_agent_alive() -> None:
    r = await rig(fail(LLMErrorKind.UNKNOWN, None), text("later"))
    await r.run("hi")
    assert r.of(TurnEnded)[0].outcome == "failed"
    assert r.lines() == ["user:hi"]
    await r.run("again")
    assert r.lines() == ["user:hi", "user:again", "assistant:later"]


async def test_notify_while_idle_starts_a_turn() -> None:
    r = await rig(text("seen"))
    await r.agent.notify(note("event"))
    await r.agent.idle()
    assert r.lines() == ["user:event", "assistant:seen"]
    assert r.agent.history[0].meta.source == "notify"


async def test_notify_while_a_tool_runs_lands_after_the_tool_message_in_the_same_turn() -> None:
    gate = Gate()
    r = await rig(
        calls(("c1", "slow")), text("final"), runner=ScriptedRunner(slow=gated(gate, "x"))
    )
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.notify(note("ping"))
    gate.open()
    await r.agent.idle()
    assert r.lines() == ["user:hi", "assistant:[c1]", "tool:x", "user:ping", "assistant:final"]
    assert len(r.of(TurnEnded)) == 1
    assert [e.message.text for e in r.of(InputsDrained)[0].entries] == ["ping"]


async def test_notify_during_a_text_only_step_starts_a_new_turn() -> None:
    gate = Gate()
    r = await rig([RequestSent(), gate, TextDelta(text="one"), *text()[-1:]], text("two"))
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.notify(note("ping"))
    gate.open()
    await r.agent.idle()
    assert [len(e.produced) for e in r.of(TurnEnded)] == [1, 1]
    assert r.lines() == ["user:hi", "assistant:one", "user:ping", "assistant:two"]


async def test_reminders_keep_the_latest_per_key_and_never_start_a_turn() -> None:
    r = await rig(text("never"))
    await r.agent.remind("todo", note("old", "reminder"))
    await r.agent.remind("todo", note("new", "reminder"))
    await r.agent.idle()
    assert r.agent.state == "idle.ready"
    assert r.requester.calls == 0
    [(key, entry)] = r.agent.reminders.items()
    assert (key, entry.message.text, entry.meta.key) == ("todo", "new", "todo")


async def test_reminder_lands_after_the_tool_message_at_the_drain_point() -> None:
    r = await rig(calls(("c1", "echo")), text("done"), runner=ScriptedRunner(echo=ok("x")))
    await r.agent.remind("todo", note("remember", "reminder"))
    await r.run("hi")
    assert r.lines() == ["user:hi", "assistant:[c1]", "tool:x", "user:remember", "assistant:done"]
    assert r.agent.reminders == {}


async def test_steer_of_an_unknown_prompt_is_a_no_op() -> None:
    r = await rig()
    assert await r.agent.steer(["nope"]) is False
    assert r.of(SteerMerged) == []


async def test_steer_merges_taken_prompts_into_one_in_turn_notification() -> None:
    gate = Gate()
    r = await rig(calls(("c1", "slow")), text("done"), runner=ScriptedRunner(slow=gated(gate, "x")))
    await r.agent.submit(prompt("hi", "p0"))
    await settle()
    await r.agent.submit(prompt("p2 body", "p2"))
    await r.agent.submit(prompt("keep", "p9"))
    await r.agent.submit(prompt("third", "p3"))
    assert await r.agent.steer(["p3", "p2"]) is True
    [steered] = r.of(SteerMerged)
    assert steered.prompt_ids == ("p2", "p3")
    assert [p.text for p in steered.entry.message.content] == ["p2 body", "third"]  # type: ignore[union-attr]
    assert steered.entry.meta.in_turn and steered.entry.meta.source == "input"
    assert [e.meta.prompt_id for e in r.agent.queue] == ["p9"]
    gate.open()
    await r.agent.idle()
    assert r.lines()[3] == "user:p2 bodythird"


async def test_steer_of_a_single_prompt_names_it() -> None:
    gate = Gate()
    r = await rig([RequestSent(), gate, *text("x")[1:]], text("y"))
    await r.agent.submit(prompt("hi", "p0"))
    await settle()
    await r.agent.submit(prompt("s", "p1"))
    await r.agent.steer(["p1"])
    assert r.agent.notifications[0].meta.prompt_id == "p1"
    assert r.agent.notifications[0].meta.prompt_ids == ("p1",)
    gate.open()
    await r.agent.idle()


async def test_cancel_of_a_queued_prompt_removes_it() -> None:
    r = await rig(text("x"))
    await r.agent.pause()
    await r.agent.submit(prompt("a", "p1"))
    assert await r.agent.cancel_queued("p1") is True
    assert await r.agent.cancel_queued("p1") is False
    assert r.agent.queue == ()


async def test_edit_and_move_of_queued_prompts() -> None:
    r = await rig()
    await r.agent.pause()
    for i in (1, 2, 3):
        await r.agent.submit(prompt(f"t{i}", f"p{i}"))
    assert await r.agent.edit_queued("p2", user_message("edited")) is True
    assert await r.agent.move_queued("p3", -2) is True
    assert await r.agent.move_queued("p3", -1) is False  # already first
    assert await r.agent.move_queued("zz", 1) is False
    assert [e.message.text for e in r.agent.queue] == ["t3", "t1", "edited"]


async def test_paused_agent_keeps_submissions_queued_until_continue() -> None:
    r = await rig(text("ran"))
    await r.agent.pause()
    await r.agent.submit(prompt("hi", "p1"))
    await r.agent.idle()
    assert r.requester.calls == 0 and len(r.agent.queue) == 1
    await r.agent.resume()
    await r.agent.idle()
    assert r.lines() == ["user:hi", "assistant:ran"] and not r.agent.paused


async def test_pause_while_a_tool_runs_ends_the_turn_at_the_drain_then_continue_resumes() -> None:
    gate = Gate()
    r = await rig(
        calls(("c1", "slow")), text("final"), runner=ScriptedRunner(slow=gated(gate, "x"))
    )
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.pause()
    gate.open()
    await r.agent.idle()
    assert r.lines() == ["user:hi", "assistant:[c1]", "tool:x"]
    assert r.of(TurnEnded)[0].outcome == "done" and r.agent.next_turn_id == 1
    await r.agent.resume()
    await r.agent.idle()
    assert r.lines()[-1] == "assistant:final" and r.agent.next_turn_id == 2


async def test_continue_on_history_ending_with_a_plain_assistant_message_starts_nothing() -> None:
    history = [
        prompt("hi"),
        HistoryEntry(message=Message(role="assistant"), meta=EntryMeta(source="llm")),
    ]
    r = await rig(text("x"), history=history)
    await r.agent.resume()
    await r.agent.idle()
    assert r.requester.calls == 0


async def test_prompt_gate_rewrite_commits_the_rewritten_text() -> None:
    async def gate(entry: HistoryEntry) -> GateVerdict:
        return GateVerdict(message=user_message("rewritten"))

    r = await rig(text("ok"), gate=gate)
    await r.run("original")
    assert r.lines() == ["user:rewritten", "assistant:ok"]


async def test_prompt_gate_block_emits_blocked_and_clears_the_queue() -> None:
    async def gate(entry: HistoryEntry) -> GateVerdict:
        return GateVerdict(block=True)

    r = await rig(text("ok"), gate=gate)
    await r.run("nope")
    assert [e.prompt_id for e in r.of(PromptBlocked)] == ["p1"]
    assert r.agent.queue == () and r.agent.history == ()


async def test_throwing_prompt_gate_fails_the_queue_and_stays_idle() -> None:
    async def gate(entry: HistoryEntry) -> GateVerdict:
        raise RuntimeError("gate down")

    r = await rig(text("ok"), gate=gate)
    await r.run("a")
    assert [(e.prompt_id, e.error) for e in r.of(PromptGateFailed)] == [("p1", "gate down")]
    assert r.agent.queue == () and r.agent.state == "idle.ready"
    assert r.agent.errors == []


async def test_prompt_gate_judges_each_queued_item() -> None:
    async def gate(entry: HistoryEntry) -> GateVerdict:
        if entry.message.text == "a":
            return GateVerdict(message=user_message("rewritten"))
        return GateVerdict(block=True)

    r = await rig(text("ok"), gate=gate)
    await r.agent.pause()
    await r.agent.submit(prompt("a", "p1"))
    await r.agent.submit(prompt("b", "p2"))
    await r.agent.resume()
    await r.agent.idle()
    assert r.lines() == ["user:rewritten", "assistant:ok"]
    assert [e.prompt_id for e in r.of(PromptBlocked)] == ["p2"]


async def test_detached_tool_is_answered_with_its_ack_and_the_turn_goes_on() -> None:
    finished = Gate()
    runner = ScriptedRunner(bg_tool=detaching("started in background", finished))
    r = await rig(calls(("call-1", "bg_tool")), text("meanwhile"), text("noted"), runner=runner)
    await r.run("hi")
    assert r.lines() == [
        "user:hi",
        "assistant:[call-1]",
        "tool:started in background",
        "assistant:meanwhile",
    ]
    assert r.agent.state == "idle.waiting" and r.agent.background == ("call-1",)
    assert r.of(ToolDetached)[0].ack == "started in background"
    finished.open()
    await settle()
    await r.agent.idle()
    assert r.lines()[4:] == [
        "user:[async tool completed] bg_tool (tool_call_id=call-1)\nbg-result",
        "assistant:noted",
    ]
    assert r.agent.history[4].meta.source == "async-tool"
    assert r.agent.background == () and r.agent.state == "idle.ready"
    assert r.of(ToolSettled)[-1].background


async def test_detached_tool_failure_becomes_an_async_failed_notification() -> None:
    finished = Gate()
    runner = ScriptedRunner(bg=detaching("", finished, failure="disk full"))
    r = await rig(calls(("c1", "bg")), text("a"), text("b"), runner=runner)
    await r.run("hi")
    assert r.lines()[2] == "tool:async running: bg"
    finished.open()
    await settle()
    await r.agent.idle()
    assert r.lines()[4] == "user:[async tool failed] bg (tool_call_id=c1)\ndisk full"


async def test_a_detached_tool_ending_in_an_error_result_is_told_as_failed() -> None:
    finished = Gate()

    async def failing(call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        ctx.detach("")
        await finished.event.wait()
        return error_result("exit status 2")  # what the tools layer answers, never raising

    r = await rig(calls(("c1", "bg")), text("a"), text("b"), runner=ScriptedRunner(bg=failing))
    await r.run("hi")
    finished.open()
    await settle()
    await r.agent.idle()
    assert r.lines()[4] == "user:[async tool failed] bg (tool_call_id=c1)\nexit status 2"


async def test_detached_and_sync_tools_in_one_step_continue_after_both() -> None:
    finished = Gate()
    runner = ScriptedRunner(bg=detaching("ack", finished), sync=ok("sync"))
    r = await rig(calls(("a", "bg"), ("b", "sync")), text("next"), text("later"), runner=runner)
    await r.run("hi")
    assert r.lines()[2:] == ["tool:ack", "tool:sync", "assistant:next"]
    finished.open()
    await settle()
    await r.agent.idle()
    assert len(r.of(TurnEnded)) == 2


async def test_abort_while_streaming_salvages_partial_text_without_calls() -> None:
    gate = Gate()
    stream = [
        RequestSent(),
        TextDelta(text="hel"),
        TextDelta(text="lo"),
        ToolCallDelta(index=0, id="c", name="shell", arguments="{"),
        TextDelta(text="   "),
        gate,
    ]
    r = await rig(stream)
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.abort("user_cancelled")
    await r.agent.idle()
    assert r.requester.signals[0].aborted and r.requester.signals[0].reason == "user_cancelled"
    assert len(r.of(AbortBegun)) == 1
    assert r.lines() == ["user:hi", "assistant:hello"]
    assert r.agent.history[1].meta.source == "salvaged"
    [ended] = r.of(TurnEnded)
    assert ended.outcome == "aborted" and ended.reason == "user_cancelled"
    assert r.requester.closed == 1


async def test_abort_with_nothing_streamed_salvages_nothing() -> None:
    gate = Gate()
    r = await rig([RequestSent(), gate])
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.abort()
    await r.agent.idle()
    assert r.lines() == ["user:hi"]


async def test_abort_reason_reaches_llm_and_tool_signals() -> None:
    runner = ScriptedRunner(wait=hang_until_aborted())
    r = await rig(calls(("c1", "wait")), runner=runner)
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.abort("because")
    await r.agent.idle()
    assert runner.signals["c1"].reason == "because"
    assert runner.batch_signals[0].reason == "because"


async def test_tool_rejecting_on_abort_is_recorded_aborted_and_continue_runs_a_new_turn() -> None:
    clock = FakeClock()
    runner = ScriptedRunner(wait=hang_until_aborted())
    r = await rig(calls(("c1", "wait")), text("resumed"), runner=runner, clock=clock)
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.abort()
    await r.agent.idle()
    assert r.lines() == ["user:hi", "assistant:[c1]", "tool:aborted"]
    assert r.agent.history[2].message.is_error
    await r.agent.resume()
    await r.agent.idle()
    assert r.lines()[-1] == "assistant:resumed" and r.agent.next_turn_id == 2


async def test_agent_is_aborting_while_tools_wind_down() -> None:
    clock = FakeClock()
    gate = Gate()
    runner = ScriptedRunner(slow=gated(gate, "late"))
    r = await rig(calls(("c1", "slow")), runner=runner, clock=clock)
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.abort()
    assert (r.agent.state, r.agent.turn_state) == ("running.aborting", "aborting")
    gate.open()
    await r.agent.idle()
    assert r.lines()[-1] == "tool:late"  # a result given after abort is kept


async def test_tool_resolving_partial_output_on_abort_is_kept() -> None:
    runner = ScriptedRunner(wait=hang_until_aborted(on_abort="partial"))
    r = await rig(calls(("c1", "wait")), runner=runner, clock=FakeClock())
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.abort()
    await r.agent.idle()
    assert r.lines()[-1] == "tool:partial"


async def test_second_abort_forces_the_end_over_a_tool_that_ignores_abort() -> None:
    runner = ScriptedRunner(stuck=hang_forever())
    r = await rig(calls(("c1", "stuck")), runner=runner, clock=FakeClock())
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.abort()
    assert r.agent.state == "running.aborting"
    await r.agent.abort()
    await r.agent.idle()
    assert r.lines()[-1] == "tool:aborted"
    assert r.of(TurnEnded)[0].outcome == "aborted"


async def test_abort_grace_ends_the_turn_over_a_hung_tool() -> None:
    clock = FakeClock()
    r = await rig(
        calls(("c1", "stuck")),
        runner=ScriptedRunner(stuck=hang_forever()),
        clock=clock,
        abort_grace_s=2.5,
        abort_timeout_s=10.0,
    )
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.abort()
    await clock.advance(2.5)
    await r.agent.idle()
    assert r.lines()[-1] == "tool:aborted"


async def test_abort_timeout_forces_the_end_when_the_turn_grace_is_longer() -> None:
    clock = FakeClock()
    r = await rig(
        calls(("c1", "stuck")),
        runner=ScriptedRunner(stuck=hang_forever()),
        clock=clock,
        abort_grace_s=60.0,
        abort_timeout_s=0.05,
    )
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.abort()
    await clock.advance(0.05)
    await r.agent.idle()
    assert r.of(TurnEnded)[0].outcome == "aborted"
    assert r.lines()[-1] == "tool:aborted"


async def test_abort_with_queued_and_steered_prompts_opens_the_next_turn_steer_first() -> None:
    gate = Gate()
    r = await rig([RequestSent(), gate], text("next"), clock=FakeClock())
    await r.agent.submit(prompt("hi", "p0"))
    await settle()
    await r.agent.submit(prompt("queued", "p1"))
    await r.agent.submit(prompt("steered", "p2"))
    await r.agent.steer(["p2"])
    await r.agent.abort()
    await r.agent.idle()
    assert r.lines() == ["user:hi", "user:steered", "user:queued", "assistant:next"]


async def test_detached_tool_survives_a_turn_abort_and_dies_on_close() -> None:
    finished = Gate()
    runner = ScriptedRunner(bg=detaching("ack", finished))
    gate = Gate()
    r = await rig(calls(("c1", "bg")), [RequestSent(), gate], runner=runner, clock=FakeClock())
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.abort()
    await r.agent.idle()
    assert not runner.signals["c1"].aborted
    assert r.agent.state == "idle.waiting"
    await r.agent.close()
    assert runner.signals["c1"].aborted and r.agent.state == "closed"


async def test_abort_tool_aborts_one_call_and_the_turn_goes_on() -> None:
    runner = ScriptedRunner(wait=hang_until_aborted(), fine=ok("fine"))
    r = await rig(calls(("a", "wait"), ("b", "fine")), text("after"), runner=runner)
    await r.agent.submit(prompt("hi"))
    await settle()
    assert await r.agent.abort_tool("a", "too slow") is True
    await r.agent.idle()
    assert runner.signals["a"].reason == "too slow"
    assert r.lines()[2:] == ["tool:aborted", "tool:fine", "assistant:after"]
    assert await r.agent.abort_tool("a", "again") is False


async def test_abort_while_idle_is_a_no_op() -> None:
    r = await rig()
    await r.agent.abort()
    assert r.agent.state == "idle.ready" and r.of(AbortBegun) == []


async def test_reset_while_idle_replaces_history_and_keeps_the_queue() -> None:
    r = await rig(text("x"))
    await r.agent.pause()
    await r.agent.submit(prompt("q1", "q1"))
    await r.agent.reset([prompt("summary")])
    assert r.lines() == ["user:summary"] and len(r.agent.queue) == 1
    await r.agent.resume()
    await r.agent.idle()
    assert r.lines() == ["user:summary", "user:q1", "assistant:x"]


async def test_reset_while_a_request_is_in_flight_aborts_it_and_ignores_late_events() -> None:
    gate = Gate()
    r = await rig([RequestSent(), TextDelta(text="late"), gate], text("fresh"))
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.reset([prompt("compacted")])
    assert r.requester.signals[0].aborted
    gate.open()
    await settle()
    assert r.lines() == ["user:compacted"]
    assert r.of(TurnEnded)[0].outcome == "aborted" and r.of(TurnEnded)[0].produced == ()
    await r.agent.notify(note("ping"))
    await r.agent.idle()
    assert r.lines() == ["user:compacted", "user:ping", "assistant:fresh"]
    assert [e.turn_id for e in r.of(TurnOpened)] == [0, 1]


async def test_close_ends_a_running_turn_and_the_agent() -> None:
    gate = Gate()
    r = await rig([RequestSent(), gate])
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.close()
    await r.agent.idle()
    assert r.agent.state == "closed"
    assert r.requester.signals[0].aborted
    assert r.agent.errors == []


async def test_turn_started_lists_notifications_before_prompts() -> None:
    r = await rig(text("ok"))
    await r.agent.pause()
    await r.agent.submit(prompt("prompt", "p1"))
    await r.agent.notify(note("notice"))
    await r.agent.resume()
    await r.agent.idle()
    assert [e.message.text for e in r.of(TurnOpened)[0].entries] == ["notice", "prompt"]


async def test_tools_view_shows_running_calls_by_state() -> None:
    gate = Gate()
    r = await rig(calls(("c1", "slow")), text("ok"), runner=ScriptedRunner(slow=gated(gate, "x")))
    await r.agent.submit(prompt("hi"))
    await settle()
    assert r.agent.tools == {"c1": ("slow", "executing")}
    assert r.agent.step == 1 and r.agent.active_turn_id == 0
    gate.open()
    await r.agent.idle()
    assert r.agent.tools == {} and r.agent.turn_state is None


async def test_continue_on_history_ending_with_a_tool_result_starts_a_continuation_turn() -> None:
    history = [
        prompt("hi"),
        HistoryEntry(
            message=Message(
                role="assistant",
                tool_calls=(ToolCall(id="c1", name="t"),),
            ),
            meta=EntryMeta(source="llm"),
        ),
        HistoryEntry(
            message=Message(role="tool", tool_call_id="c1"), meta=EntryMeta(source="tool")
        ),
    ]
    r = await rig(text("continued"), history=history)
    await r.agent.resume()
    await r.agent.idle()
    assert r.lines()[-1] == "assistant:continued"
    assert r.of(TurnOpened)[0].entries == ()


async def test_assistant_entry_meta_carries_model_usage_finish_and_message_id() -> None:
    usage = TokenUsage(input_other=3, output=2)
    stream = [
        RequestSent(),
        TextDelta(text="hi"),
        UsageReported(usage=usage),
        MessageIdReported(message_id="msg-1"),
        *text()[-1:],
    ]
    r = await rig(stream)
    await r.agent.notify(note("ping"))
    await r.agent.idle()
    meta = r.agent.history[-1].meta
    assert (meta.source, meta.model, meta.usage, meta.message_id) == (
        "llm",
        "test-model",
        usage,
        "msg-1",
    )
    assert meta.finish == Finish(reason=FinishReason.END_TURN, raw="stop")


async def test_commands_after_close_are_ignored_without_errors() -> None:
    r = await rig(text("x"))
    await r.agent.close()
    await r.agent.submit(prompt("late"))
    await r.agent.abort()
    await r.agent.close()
    await r.agent.idle()
    assert r.agent.state == "closed" and r.requester.calls == 0


async def test_abort_right_after_submit_reaches_the_turn_that_starts_later() -> None:
    gate = Gate()
    r = await rig([RequestSent(), gate], clock=FakeClock())
    await r.agent.submit(prompt("hi"))
    await r.agent.abort("early")
    await r.agent.idle()
    [ended] = r.of(TurnEnded)
    assert ended.outcome == "aborted" and ended.reason == "early"


async def test_a_raising_listener_is_recorded_and_the_turn_still_completes() -> None:
    from tests.kernel.fakes import ScriptedRequester, line
    from tui_agent.kernel import Agent, KernelEvent, StreamPart

    def flaky(event: KernelEvent) -> None:
        if isinstance(event, StreamPart):
            raise ValueError("listener bug")

    requester = ScriptedRequester(calls(("c1", "echo")), text("done"))
    agent = Agent(requester, ScriptedRunner(echo=ok("x")), flaky)
    await agent.start()
    await agent.submit(prompt("hi"))
    await agent.idle()
    assert [line(e) for e in agent.history] == [
        "user:hi",
        "assistant:[c1]",
        "tool:x",
        "assistant:done",
    ]
    assert agent.errors and all(isinstance(e, ValueError) for e in agent.errors)
