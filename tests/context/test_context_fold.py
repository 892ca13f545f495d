"""Folding event-log records back into history (docs/loop-spec.md §7 and its fold test list)."""

from __future__ import annotations

import pytest

from tests.context.context_builders import LogBuilder, entry, history_problems
from tui_agent.context import (
    INTERRUPTED_TOOL_OUTPUT,
    Compaction,
    Fold,
    ToolResultRecorded,
    fold,
    is_summary,
)
from tui_agent.vocab import FinishReason, TextPart, ThinkPart, TokenUsage, ToolCall

ABORTED = "The user cancelled the turn before the tool finished."


def test_text_call_and_result_fold_to_assistant_then_tool() -> None:
    log = LogBuilder().prompt("read it")
    step = log.step()
    log.text(step, "Reading.").call(step, "c1").result("c1", "contents", is_error=True)
    log.end(step, FinishReason.TOOL_USE)

    history = fold(log.records)

    assert [e.message.role for e in history] == ["user", "assistant", "tool"]
    assert history[1].message.text == "Reading."
    assert [c.id for c in history[1].message.tool_calls] == ["c1"]
    assert history[2].message.tool_call_id == "c1"
    assert history[2].message.text == "contents"
    assert history[2].message.is_error


def test_results_in_completion_order_are_paired_in_call_order() -> None:
    log = LogBuilder().prompt("two")
    step = log.step()
    log.call(step, "a").call(step, "b").result("b", "B").result("a", "A")
    log.end(step, FinishReason.TOOL_USE)

    history = fold(log.records)

    assert [e.message.tool_call_id for e in history[2:]] == ["a", "b"]
    assert [e.message.text for e in history[2:]] == ["A", "B"]


def test_prompt_becomes_an_input_entry_with_its_id() -> None:
    history = fold(LogBuilder().prompt("hello", prompt_id="p7").records)

    assert history[0].message.text == "hello"
    assert history[0].meta.source == "input"
    assert history[0].meta.prompt_id == "p7"


def test_failed_attempts_empty_partial_is_dropped_at_next_step_begin() -> None:
    log = LogBuilder().prompt("go")
    first = log.step()
    log.end(first, FinishReason.ERROR)
    second = log.step()
    log.text(second, "done").end(second)

    history = fold(log.records)

    assert [e.message.role for e in history] == ["user", "assistant"]
    assert history[1].message.text == "done"


def test_failed_attempts_non_empty_partial_is_sealed_with_its_calls_closed() -> None:
    log = LogBuilder().prompt("go")
    first = log.step()
    log.text(first, "half an answer").call(first, "c1").end(first, FinishReason.ERROR)
    second = log.step()
    log.text(second, "again").end(second)

    history = fold(log.records)

    assert [e.message.role for e in history] == ["user", "assistant", "tool", "assistant"]
    assert history[1].message.text == "half an answer"
    assert history[2].message.tool_call_id == "c1"
    assert history[2].message.is_error
    assert history[2].message.text == INTERRUPTED_TOOL_OUTPUT


@pytest.mark.parametrize(
    "parts",
    [
        pytest.param([], id="no output"),
        pytest.param([ThinkPart(think="")], id="only an empty think block"),
        pytest.param([TextPart(text="  \n")], id="only blank text"),
    ],
)
def test_assistant_without_output_is_dropped_at_step_end(parts: list[TextPart | ThinkPart]) -> None:
    log = LogBuilder().prompt("go")
    step = log.step()
    for part in parts:
        log.part(step, part)
    log.end(step)

    assert [e.message.role for e in fold(log.records)] == ["user"]


@pytest.mark.parametrize(
    ("parts", "calls"),
    [
        pytest.param([ThinkPart(think="pondering")], 0, id="think with content"),
        pytest.param([ThinkPart(think="", signature="sig")], 0, id="empty think with signature"),
        pytest.param([ThinkPart(think=""), TextPart(text="hi")], 0, id="empty think plus text"),
        pytest.param([ThinkPart(think="")], 1, id="calls plus empty think"),
    ],
)
def test_assistant_with_substance_is_sealed(parts: list[TextPart | ThinkPart], calls: int) -> None:
    log = LogBuilder().prompt("go")
    step = log.step()
    for part in parts:
        log.part(step, part)
    for index in range(calls):
        log.call(step, f"c{index}").result(f"c{index}")
    log.end(step, FinishReason.TOOL_USE if calls else FinishReason.END_TURN)

    history = fold(log.records)

    assert history[1].message.role == "assistant"
    assert list(history[1].message.content) == parts


def test_interrupted_step_end_leaves_the_open_assistant_untouched() -> None:
    log = LogBuilder().prompt("go")
    step = log.step()
    log.text(step, "partial").end(step, FinishReason.INTERRUPTED)
    folder = Fold()
    folder.extend(log.records)

    folder.apply(LogBuilder().text(step, " more").records[0])

    history = folder.entries()
    assert [part.text for part in history[1].message.content if isinstance(part, TextPart)] == [
        "partial",
        " more",
    ]


def test_step_end_records_finish_usage_and_model_on_the_assistant() -> None:
    log = LogBuilder().prompt("go")
    step = log.step()
    usage = TokenUsage(input_other=100, output=7)
    log.text(step, "hi").end(step, FinishReason.END_TURN, usage=usage)

    meta = fold(log.records)[1].meta

    assert meta.source == "llm"
    assert meta.usage == usage
    assert meta.finish is not None and meta.finish.reason is FinishReason.END_TURN


def test_tool_result_note_is_folded_as_model_only_meta() -> None:
    log = LogBuilder().prompt("go")
    step = log.step()
    log.call(step, "c1").result("c1", "out", note="<system>truncated</system>")
    log.end(step, FinishReason.TOOL_USE)

    result = fold(log.records)[2]

    assert result.message.text == "out"
    assert result.meta.note == "<system>truncated</system>"


def test_crash_after_tool_calls_repairs_each_unanswered_call() -> None:
    log = LogBuilder().prompt("go")
    step = log.step()
    log.text(step, "running both").call(step, "a").call(step, "b").result("a", "A")

    history = fold(log.records)

    assert [e.message.role for e in history] == ["user", "assistant", "tool", "tool"]
    assert history[2].message.text == "A" and not history[2].message.is_error
    assert history[3].message.tool_call_id == "b"
    assert history[3].message.is_error
    assert history[3].message.text == INTERRUPTED_TOOL_OUTPUT


def test_cancel_backfill_pairs_the_aborted_results_not_the_crash_text() -> None:
    log = LogBuilder().prompt("go")
    turn = log.turn()
    step = log.step()
    log.call(step, "a", name="shell").result("a", ABORTED, is_error=True)
    log.end(step, FinishReason.INTERRUPTED).turn_end(turn, "cancelled")
    log.prompt("next", prompt_id="p2")

    history = fold(log.records)

    assert [e.message.role for e in history] == ["user", "assistant", "tool", "user"]
    assert history[2].message.text == ABORTED
    assert history[3].message.text == "next"
    assert history_problems(history) == []


def test_notification_while_results_pending_never_splits_the_exchange() -> None:
    log = LogBuilder().prompt("go")
    step = log.step()
    log.call(step, "a").call(step, "b").result("a").notify("build finished").result("b")
    log.end(step, FinishReason.TOOL_USE)

    history = fold(log.records)

    assert [e.message.role for e in history] == ["user", "assistant", "tool", "tool", "user"]
    assert history[4].message.text == "build finished"


def test_content_for_another_step_is_ignored() -> None:
    log = LogBuilder().prompt("go")
    step = log.step()
    log.text("step-elsewhere", "stray").text(step, "mine").end(step)

    assert fold(log.records)[1].message.text == "mine"


def test_result_for_an_unknown_call_is_ignored() -> None:
    log = LogBuilder().prompt("go")
    step = log.step()
    log.call(step, "a").result("zzz", "stray").result("a", "A").end(step, FinishReason.TOOL_USE)

    history = fold(log.records)

    assert [e.message.tool_call_id for e in history[2:]] == ["a"]


def test_entries_of_an_open_step_do_not_settle_it() -> None:
    log = LogBuilder().prompt("go")
    step = log.step()
    log.call(step, "a")
    folder = Fold()
    folder.extend(log.records)

    assert folder.entries()[2].message.text == INTERRUPTED_TOOL_OUTPUT
    folder.apply(ToolResultRecorded(call_id="a", output="late but real"))

    assert folder.pending == ()
    assert folder.entries()[2].message.text == "late but real"


def test_compaction_replaces_the_history_before_it() -> None:
    log = LogBuilder().prompt("old request")
    step = log.step()
    log.text(step, "old answer").end(step)
    kept = (entry("user", "current request"),)
    records = [*log.records, Compaction(summary="They asked for X.", kept=kept)]
    records += LogBuilder().prompt("after", prompt_id="p9").records

    history = fold(records)

    assert is_summary(history[0])
    assert "They asked for X." in history[0].message.text
    assert [e.message.text for e in history[1:]] == ["current request", "after"]


def test_compaction_keeping_an_unfinished_exchange_adopts_it() -> None:
    call = ToolCall(id="c1", name="shell", arguments="{}")
    kept = (entry("user", "do it"), entry("assistant", calls=[call]))
    records = [
        Compaction(summary="s", kept=kept),
        ToolResultRecorded(call_id="c1", output="finished after compaction"),
    ]

    history = fold(records)

    assert history[-1].message.tool_call_id == "c1"
    assert history[-1].message.text == "finished after compaction"
    assert history_problems(history) == []
