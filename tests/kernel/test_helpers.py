"""The kernel's pure helpers: retry maths, the tool-call id normaliser, the accumulator."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from tui_agent.kernel.accumulator import (
    EMPTY_NO_CONTENT,
    MessageAccumulator,
    empty_response_error,
)
from tui_agent.kernel.ids import ToolCallIds
from tui_agent.kernel.retry import (
    RetryPolicy,
    backoff_delay_s,
    final_error,
    retry_delay_s,
    should_retry,
)
from tui_agent.kernel.turn import HistorySoFar
from tui_agent.vocab import (
    EntryMeta,
    Finish,
    FinishReason,
    HistoryEntry,
    LLMError,
    LLMErrorKind,
    Message,
    MessageIdReported,
    TextDelta,
    TextPart,
    ThinkDelta,
    ThinkPart,
    TokenUsage,
    ToolCallDelta,
    UsageReported,
)


def test_backoff_doubles_from_half_a_second_without_jitter() -> None:
    assert [backoff_delay_s(i, lambda: 0.0) for i in range(4)] == [0.5, 1.0, 2.0, 4.0]


def test_backoff_is_capped_at_32_seconds_plus_a_quarter_jitter() -> None:
    assert backoff_delay_s(50, lambda: 0.0) == 32.0
    assert backoff_delay_s(50, lambda: 1.0) == 40.0


@given(st.integers(min_value=0, max_value=200), st.floats(min_value=0.0, max_value=1.0))
def test_backoff_stays_within_base_and_a_quarter_more(index: int, r: float) -> None:
    base = min(0.5 * 2 ** min(index, 10), 32.0)
    assert base <= backoff_delay_s(index, lambda: r) <= base * 1.25


def test_retry_after_overrides_backoff() -> None:
    error = LLMError(kind=LLMErrorKind.RATE_LIMIT, message="slow down", retry_after_s=1.234)
    assert retry_delay_s(error, 1, 0.0, RetryPolicy(), lambda: 0.5) == 1.234


def test_retry_is_refused_for_non_retryable_kinds_and_at_the_attempt_limit() -> None:
    quota = LLMError(kind=LLMErrorKind.QUOTA, message="no", retry_after_s=3)
    busy = LLMError(kind=LLMErrorKind.OVERLOADED, message="busy")
    assert not should_retry(quota, 1, 0.0, RetryPolicy(max_attempts=10))
    assert should_retry(busy, 2, 0.0, RetryPolicy(max_attempts=3))
    assert not should_retry(busy, 3, 0.0, RetryPolicy(max_attempts=3))
    assert not should_retry(busy, 1, 0.0, RetryPolicy(max_attempts=0))  # at least one, no more


def _step_of_failures(error: LLMError, policy: RetryPolicy, jitter: float) -> tuple[int, float]:
    """Attempts made and seconds waited by a step whose every attempt fails with `error`."""
    attempt, waited = 1, 0.0
    while should_retry(error, attempt, waited, policy):
        waited += retry_delay_s(error, attempt, waited, policy, lambda: jitter)
        attempt += 1
    return attempt, waited


@given(st.floats(min_value=0.0, max_value=1.0))
def test_a_persistent_5xx_gives_up_once_the_waits_reach_the_budget(jitter: float) -> None:
    error = LLMError(kind=LLMErrorKind.STATUS, message="bad gateway", status=502)
    attempts, waited = _step_of_failures(error, RetryPolicy(max_attempts=100), jitter)
    assert waited == 60.0  # the last backoff is cut to what the budget leaves
    assert attempts <= 8
    attempts, waited = _step_of_failures(error, RetryPolicy(max_attempts=100, budget_s=5), jitter)
    assert waited == 5.0


def test_an_unreachable_server_gets_three_attempts() -> None:
    error = LLMError(kind=LLMErrorKind.UNREACHABLE, message="connection refused")
    attempts, waited = _step_of_failures(error, RetryPolicy(), 0.0)
    assert (attempts, waited) == (3, 1.5)


def test_a_retry_after_beyond_the_cap_is_refused_and_says_when_to_retry() -> None:
    error = LLMError(kind=LLMErrorKind.RATE_LIMIT, message="slow down", retry_after_s=100_000)
    assert not should_retry(error, 1, 0.0, RetryPolicy())
    now = time.mktime((2026, 3, 1, 10, 0, 0, 0, 0, -1))
    shown = final_error(error, 0.0, RetryPolicy(), now)
    assert shown.message == "slow down (retry after 2026-03-02 13:46)"
    soon = error.model_copy(update={"retry_after_s": 600})
    assert final_error(soon, 0.0, RetryPolicy(), now).message == "slow down (retry after 10:10)"


def test_a_retry_after_within_the_cap_but_beyond_the_budget_left_is_refused() -> None:
    error = LLMError(kind=LLMErrorKind.RATE_LIMIT, message="slow down", retry_after_s=30)
    assert should_retry(error, 1, 30.0, RetryPolicy())
    assert not should_retry(error, 1, 30.5, RetryPolicy())
    assert final_error(error, 0.0, RetryPolicy(max_attempts=1), 0.0) == error  # attempts ran out


def test_first_occurrence_of_an_unseen_id_is_kept() -> None:
    ids = ToolCallIds()
    assert ids.claim(0, "call-1") == "call-1"
    assert ids.claim(0, "ignored") == "call-1"  # one index keeps one id


def test_duplicate_id_in_one_response_gets_a_suffix() -> None:
    ids = ToolCallIds()
    assert [ids.claim(0, "call-1"), ids.claim(1, "call-1")] == ["call-1", "call-1__2"]


def test_ids_reused_in_later_steps_keep_growing() -> None:
    ids = ToolCallIds()
    ids.claim(0, "call-1")
    ids.claim(1, "call-1")
    ids.commit()
    assert ids.claim(0, "call-1") == "call-1__3"
    ids.commit()
    assert ids.claim(0, "call-1") == "call-1__4"


def test_id_seen_in_history_is_renamed() -> None:
    ids = ToolCallIds(["call-1", "call-1__2"])
    assert ids.claim(0, "call-1") == "call-1__3"


def test_rollback_releases_a_discarded_attempts_ids() -> None:
    ids = ToolCallIds()
    ids.claim(0, "call-1")
    ids.rollback()
    assert ids.claim(0, "call-1") == "call-1"


def _acc() -> MessageAccumulator:
    return MessageAccumulator(ToolCallIds())


def test_accumulator_joins_text_and_keeps_part_order() -> None:
    acc = _acc()
    for event in (
        ThinkDelta(text="hm"),
        ThinkDelta(text="m", signature="sig"),
        TextDelta(text="hel"),
        TextDelta(text="lo"),
    ):
        acc.feed(event)
    assert acc.message().content == (
        ThinkPart(think="hmm", signature="sig"),
        TextPart(text="hello"),
    )


def test_accumulator_opens_a_new_text_part_after_thinking_or_a_call() -> None:
    acc = _acc()
    for event in (
        TextDelta(text="a"),
        TextDelta(text=""),
        TextDelta(text="b"),
        ThinkDelta(text="t"),
        TextDelta(text="c"),
        ToolCallDelta(index=0, id="x", name="shell"),
        TextDelta(text="d"),
        TextDelta(text="e"),
    ):
        acc.feed(event)
    assert acc.message().content == (
        TextPart(text="ab"),
        ThinkPart(think="t"),
        TextPart(text="c"),
        TextPart(text="de"),
    )


def test_accumulator_assembles_arguments_split_across_deltas_by_index() -> None:
    acc = _acc()
    for event in (
        ToolCallDelta(index=1, id="b", name="grep", arguments='{"pat'),
        ToolCallDelta(index=0, id="a", name="read_file", arguments=""),
        ToolCallDelta(index=1, arguments='tern": "x"}'),
        ToolCallDelta(index=0, arguments='{"path": "f"}'),
    ):
        acc.feed(event)
    calls = acc.message().tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("a", "read_file", '{"path": "f"}'),
        ("b", "grep", '{"pattern": "x"}'),
    ]


def test_accumulator_forwards_renamed_call_ids_and_keeps_the_raw_id() -> None:
    acc = MessageAccumulator(ToolCallIds(["call-1"]))
    forwarded = acc.feed(ToolCallDelta(index=0, id="call-1", name="shell"))
    assert isinstance(forwarded, ToolCallDelta) and forwarded.id == "call-1__2"
    assert acc.message().tool_calls[0].raw_id == "call-1"


def test_accumulator_records_merged_usage_message_id_and_finish_in_the_entry() -> None:
    acc = _acc()
    acc.feed(TextDelta(text="hi"))
    acc.feed(UsageReported(usage=TokenUsage(input_other=10)))
    acc.feed(UsageReported(usage=TokenUsage(output=5)))
    acc.feed(MessageIdReported(message_id="m1"))
    acc.finish = Finish(reason=FinishReason.END_TURN, raw="stop")
    meta = acc.entry("m").meta
    assert meta.usage == TokenUsage(input_other=10, output=5)
    assert (meta.source, meta.message_id, meta.model) == ("llm", "m1", "m")
    assert meta.finish == Finish(reason=FinishReason.END_TURN, raw="stop")


def test_salvage_keeps_non_blank_content_and_drops_calls() -> None:
    acc = _acc()
    for event in (
        TextDelta(text="hel"),
        TextDelta(text="lo"),
        ToolCallDelta(index=0, id="c", name="shell", arguments="{"),
        TextDelta(text="   "),
    ):
        acc.feed(event)
    salvaged = acc.salvage(None)
    assert salvaged is not None
    assert salvaged.message.content == (TextPart(text="hello"),)
    assert salvaged.message.tool_calls == ()
    assert salvaged.meta.source == "salvaged"


def test_salvage_of_blank_output_is_nothing() -> None:
    acc = _acc()
    acc.feed(TextDelta(text="  \n"))
    assert acc.salvage(None) is None


def test_empty_message_is_an_empty_response_naming_provider_and_model() -> None:
    error = empty_response_error(Message(role="assistant"), None, "test", "test-model")
    assert error is not None and error.kind is LLMErrorKind.EMPTY_RESPONSE
    assert error.message.startswith(EMPTY_NO_CONTENT)
    assert error.message.endswith("Provider: test, model: test-model")


def test_thinking_only_message_is_an_empty_response() -> None:
    message = Message(role="assistant", content=(ThinkPart(think="hmm"), TextPart(text=" ")))
    error = empty_response_error(message, None, "p", "m")
    assert error is not None and "only thinking content" in error.message


def test_filtered_empty_response_is_not_retryable() -> None:
    finish = Finish(reason=FinishReason.FILTERED, raw="content_filter")
    error = empty_response_error(Message(role="assistant"), finish, "p", "m")
    assert error is not None and not error.retryable


def test_text_or_calls_are_not_an_empty_response() -> None:
    message = Message(role="assistant", content=(TextPart(text="ok"),))
    assert empty_response_error(message, None, "p", "m") is None


def _entries(count: int, start: int = 0) -> list[HistoryEntry]:
    return [
        HistoryEntry(
            message=Message(role="user", content=(TextPart(text=str(n)),)),
            meta=EntryMeta(source="input"),
        )
        for n in range(start, start + count)
    ]


@given(st.integers(0, 4), st.integers(0, 4), st.integers(-10, 10), st.integers(-10, 10))
def test_history_so_far_reads_like_the_copy_it_replaces(
    base_len: int, produced_len: int, start: int, stop: int
) -> None:
    base, produced = tuple(_entries(base_len)), _entries(produced_len, base_len)
    view = HistorySoFar(base, produced)
    copy = base + tuple(produced)
    produced.extend(_entries(2, 100))  # later entries are not part of the attempt's history
    assert len(view) == len(copy) and tuple(view) == copy
    assert view[start:stop] == copy[start:stop] and view[::-1] == copy[::-1]
    for index in range(-len(copy), len(copy)):
        assert view[index] is copy[index]
    for outside in (len(copy), -len(copy) - 1):
        try:
            view[outside]
        except IndexError:
            continue
        raise AssertionError(f"index {outside} should be out of range")
