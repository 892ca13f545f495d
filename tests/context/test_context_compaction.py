"""Compaction: the summary keeps the task, the last request and the unfinished exchange stay."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from tests.context.context_builders import entry
from tui_agent.context import (
    SUMMARY_INSTRUCTIONS,
    CompactionFailed,
    CompactionResult,
    ContextMemory,
    compact,
    fold,
    is_summary,
    project,
    render_transcript,
)
from tui_agent.vocab import (
    Finish,
    Finished,
    FinishReason,
    HistoryEntry,
    LLMError,
    LLMErrorKind,
    LLMRequest,
    StreamEvent,
    StreamFailed,
    TextDelta,
    TokenUsage,
    ToolCall,
    UsageReported,
)

SUMMARY = "## User requests\nAdd a --verbose flag to cli.py."


class ScriptedSummariser:
    """A summary model that replays `events` and remembers what it was asked."""

    def __init__(self, events: Sequence[StreamEvent]) -> None:
        self.events = events
        self.requests: list[LLMRequest] = []

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        for event in self.events:
            yield event


class Exploding:
    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        raise RuntimeError("socket closed")
        yield TextDelta(text="never")


def _answers(summary: str = SUMMARY) -> ScriptedSummariser:
    return ScriptedSummariser(
        [
            TextDelta(text=summary[:10]),
            TextDelta(text=summary[10:]),
            UsageReported(usage=TokenUsage(input_other=900, output=60)),
            Finished(finish=Finish(reason=FinishReason.END_TURN)),
        ]
    )


def _long_session() -> list[HistoryEntry]:
    """Two turns; the second is mid-way: its last step's tool results await the model."""
    old_call = ToolCall(id="c1", name="read_file", arguments='{"path": "cli.py"}')
    new_call = ToolCall(id="c2", name="shell", arguments='{"command": "pytest"}')
    return [
        entry("user", "Add a --verbose flag to cli.py."),
        entry("assistant", "Reading cli.py.", calls=[old_call], usage=TokenUsage(output=9)),
        entry("tool", "def main(): ...", call_id="c1"),
        entry("assistant", "Added the flag.", usage=TokenUsage(input_other=90_000, output=30)),
        entry("user", "Now run the tests."),
        entry("assistant", "Running them.", calls=[new_call], usage=TokenUsage(input_other=95_000)),
        entry("tool", "3 passed", call_id="c2"),
    ]


async def test_keeps_the_last_request_and_the_unfinished_exchange_verbatim() -> None:
    history = _long_session()

    result = await compact(history, _answers(), "gpt-4.1")

    assert isinstance(result, CompactionResult)
    assert [e.message for e in result.kept] == [
        history[4].message,
        *(e.message for e in history[5:]),
    ]
    assert result.summary == SUMMARY


async def test_an_answered_last_request_is_summarised_not_kept_as_if_open() -> None:
    history = [*_long_session(), entry("assistant", "All 3 tests pass.")]
    model = _answers()

    result = await compact(history, model, "gpt-4.1")

    assert isinstance(result, CompactionResult)
    assert result.kept == ()  # nothing is open: no request follows the summary to be redone
    assert "Now run the tests." in model.requests[0].messages[0].text
    assert "All 3 tests pass." in model.requests[0].messages[0].text
    assert "do not redo it" in result.history[0].message.text


async def test_new_history_starts_with_the_summary_marked_as_earlier_conversation() -> None:
    result = await compact(_long_session(), _answers(), "gpt-4.1")

    assert isinstance(result, CompactionResult)
    first = result.history[0]
    assert is_summary(first)
    assert first.message.role == "user"
    assert SUMMARY in first.message.text
    assert "summary" in first.message.text.lower()
    assert "not a new request" in first.message.text


async def test_summary_request_carries_the_instructions_and_the_old_transcript() -> None:
    model = _answers()

    await compact(_long_session(), model, "gpt-4.1", max_summary_tokens=2_000)

    request = model.requests[0]
    assert request.model == "gpt-4.1"
    assert request.system == SUMMARY_INSTRUCTIONS
    assert request.tools == ()
    assert request.max_tokens == 2_000
    transcript = request.messages[0].text
    assert "Add a --verbose flag to cli.py." in transcript
    assert '[assistant called read_file] {"path": "cli.py"}' in transcript
    assert "Now run the tests." not in transcript  # kept verbatim, not summarised


async def test_instructions_ask_for_requests_decisions_files_and_open_items() -> None:
    for heading in ("User requests", "decisions", "Files", "Open items"):
        assert heading in SUMMARY_INSTRUCTIONS


async def test_focus_hint_reaches_the_summary_request() -> None:
    model = _answers()

    await compact(_long_session(), model, "gpt-4.1", focus="the flag's help text")

    assert "the flag's help text" in model.requests[0].messages[0].text


async def test_new_history_is_wire_valid_and_smaller() -> None:
    result = await compact(_long_session(), _answers(), "gpt-4.1")

    assert isinstance(result, CompactionResult)
    assert result.tokens_after < result.tokens_before
    assert result.usage == TokenUsage(input_other=900, output=60)
    roles = [m.role for m in project(result.history)]
    assert roles == ["user", "user", "assistant", "tool"]


async def test_kept_entries_lose_usage_so_the_next_estimate_is_not_stale() -> None:
    result = await compact(_long_session(), _answers(), "gpt-4.1")

    assert isinstance(result, CompactionResult)
    assert all(e.meta.usage is None for e in result.kept)


async def test_compaction_record_folds_back_into_the_same_history() -> None:
    result = await compact(_long_session(), _answers(), "gpt-4.1")

    assert isinstance(result, CompactionResult)
    rebuilt = fold([result.record()])
    assert [e.message for e in rebuilt] == [e.message for e in result.history]


async def test_a_failed_summary_request_is_a_clear_error_and_history_stays() -> None:
    error = LLMError(kind=LLMErrorKind.RATE_LIMIT, message="slow down")
    memory = ContextMemory(_long_session())
    before = memory.entries

    outcome = await compact(memory, ScriptedSummariser([StreamFailed(error=error)]), "gpt-4.1")

    assert isinstance(outcome, CompactionFailed)
    assert outcome.code == "context.summary_failed"
    assert "slow down" in outcome.message
    assert outcome.error == error
    assert memory.entries == before


async def test_a_provider_that_raises_is_a_failure_value() -> None:
    outcome = await compact(_long_session(), Exploding(), "gpt-4.1")

    assert isinstance(outcome, CompactionFailed)
    assert outcome.code == "context.summary_failed"


async def test_an_empty_summary_is_a_failure() -> None:
    outcome = await compact(_long_session(), _answers(summary="   "), "gpt-4.1")

    assert isinstance(outcome, CompactionFailed)
    assert outcome.code == "context.summary_empty"


async def test_only_the_current_request_is_nothing_to_compact() -> None:
    model = _answers()

    outcome = await compact([entry("user", "hello")], model, "gpt-4.1")

    assert isinstance(outcome, CompactionFailed)
    assert outcome.code == "context.nothing_to_compact"
    assert model.requests == []


async def test_a_second_compaction_summarises_the_first_summary() -> None:
    first = await compact(_long_session(), _answers(), "gpt-4.1")
    assert isinstance(first, CompactionResult)
    later = [*first.history, entry("assistant", "All green."), entry("user", "Ship it.")]
    model = _answers("second")

    second = await compact(later, model, "gpt-4.1")

    assert isinstance(second, CompactionResult)
    assert SUMMARY in model.requests[0].messages[0].text
    assert [e.message.text for e in second.kept] == ["Ship it."]


def test_transcript_over_budget_drops_old_tool_output_but_never_requests() -> None:
    history = [entry("user", "the original task")]
    for index in range(40):
        call = ToolCall(id=f"c{index}", name="read_file", arguments="{}")
        history += [
            entry("assistant", calls=[call]),
            entry("tool", "z" * 1_500, call_id=f"c{index}"),
        ]

    transcript = render_transcript(history, max_chars=8_000)

    assert len(transcript) <= 8_000
    assert "the original task" in transcript
    assert "earlier messages omitted" in transcript


def test_long_outputs_are_cut_in_the_middle() -> None:
    call = ToolCall(id="c1", name="shell", arguments="{}")
    history = [entry("assistant", calls=[call]), entry("tool", "a" * 5_000 + "END", call_id="c1")]

    transcript = render_transcript(history)

    assert "characters cut" in transcript
    assert transcript.endswith("END")
