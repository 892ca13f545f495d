"""Context memory: holding the history and estimating what it costs in tokens."""

from __future__ import annotations

from tests.context.context_builders import LogBuilder, entry
from tui_agent.context import ContextMemory, estimate_tokens
from tui_agent.vocab import TokenUsage, ToolSpec


def test_estimate_is_last_reported_usage_plus_a_quarter_token_per_later_char() -> None:
    usage = TokenUsage(input_other=1_000, input_cache_read=500, output=20)
    history = [
        entry("user", "x" * 4_000),
        entry("assistant", "done", usage=usage),
        entry("user", "y" * 400),
    ]

    assert estimate_tokens(history, system="s" * 10_000) == 1_520 + 100


def test_estimate_without_usage_counts_system_tools_and_messages() -> None:
    spec = ToolSpec(name="read_file", description="d" * 91, parameters={})
    history = [entry("user", "x" * 400), entry("assistant", "y" * 400)]

    tokens = estimate_tokens(history, system="s" * 400, tools=[spec])

    assert tokens == 100 + (9 + 91 + 2) // 4 + 1 + 100 + 100


def test_zero_usage_is_not_taken_as_a_measurement() -> None:
    history = [entry("user", "x" * 40), entry("assistant", "y" * 40, usage=TokenUsage())]

    assert estimate_tokens(history) == 20


def test_memory_folds_records_and_replaces_its_history() -> None:
    log = LogBuilder().prompt("hello")
    step = log.step()
    log.text(step, "hi there").end(step)
    memory = ContextMemory.from_records(log.records)

    assert [m.text for m in memory.messages()] == ["hello", "hi there"]
    memory.replace([entry("user", "fresh")])
    memory.append(entry("assistant", "ok"))
    assert len(memory) == 2
    assert memory.estimate_tokens() == 3
