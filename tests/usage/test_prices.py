"""Prices against figures computed by hand (the arithmetic is written out beside each)."""

from __future__ import annotations

import pytest

from tui_agent.loop import events as ev
from tui_agent.loop.costs import Budget, CostLedger, CostLine, Metering, priced
from tui_agent.usage import PriceOverride, Pricer, usd
from tui_agent.vocab import TokenUsage, ToolResult

USAGE = TokenUsage(
    input_other=1_000, input_cache_read=10_000, input_cache_creation=2_000, output=500
)


def test_anthropic_prices_come_from_the_bundled_table() -> None:
    pricer = Pricer("claude-sonnet-4-5", provider="anthropic", base_url="https://api.anthropic.com")
    # $3/M input, $0.30/M cache read, $3.75/M cache write, $15/M output:
    # 1000×3 + 10000×0.3 + 2000×3.75 + 500×15 = 3000 + 3000 + 7500 + 7500 = 21000 per M
    assert pricer.cost(USAGE) == pytest.approx(0.021)
    assert pricer.known and pricer.source.startswith("genai-prices ")


def test_a_long_request_pays_the_long_context_tier() -> None:
    pricer = Pricer("claude-sonnet-4-5", provider="anthropic")
    # Over 200k input tokens the whole request pays $6/M input and $22.50/M output:
    # 300000×6 + 1000×22.5 = 1,800,000 + 22,500 = 1,822,500 per M
    assert pricer.cost(TokenUsage(input_other=300_000, output=1_000)) == pytest.approx(1.8225)


def test_openai_prices_and_cached_input() -> None:
    pricer = Pricer("gpt-4.1", provider="openai", base_url="https://api.openai.com/v1")
    # $2/M input, $0.50/M cached input, $8/M output; OpenAI has no cache-write price, so
    # written tokens pay input: 1000×2 + 10000×0.5 + 2000×2 + 500×8 = 15000 per M
    assert pricer.cost(USAGE) == pytest.approx(0.015)


def test_a_local_server_has_no_price_even_for_a_known_name() -> None:
    pricer = Pricer("gpt-4.1", provider="openai", base_url="http://127.0.0.1:8080/v1")
    assert not pricer.known and pricer.cost(USAGE) is None and pricer.source == "price unknown"
    for local in ("http://localhost:11434/v1", "http://10.0.0.7:8000/v1", "http://[::1]:80/v1"):
        assert not Pricer("gpt-4.1", provider="openai", base_url=local).known
    assert Pricer("scripted", provider="scripted").cost(USAGE) is None


def test_config_prices_an_unknown_model() -> None:
    override = PriceOverride(input=1.0, output=2.0, cache_read=0.1)
    pricer = Pricer("qwen3", provider="openai", base_url="http://127.0.0.1:1/v1", override=override)
    # cache writes pay input when not given: 1000×1 + 10000×0.1 + 2000×1 + 500×2 = 5000 per M
    assert pricer.cost(USAGE) == pytest.approx(0.005)
    assert pricer.source == "config.toml"
    # Input alone is not a price: output is unknown.
    half = Pricer("qwen3", provider="openai", base_url="http://x/v1", override=PriceOverride(1.0))
    assert half.cost(USAGE) is None


def test_config_replaces_some_of_the_tables_prices() -> None:
    pricer = Pricer("gpt-4.1", provider="openai", override=PriceOverride(output=20.0))
    # 1000×2 + 10000×0.5 + 2000×2 + 500×20 = 21000 per M
    assert pricer.cost(USAGE) == pytest.approx(0.021)
    assert pricer.source == "genai-prices + config.toml"


def test_amounts_are_written_to_the_cent_or_finer_under_a_dollar() -> None:
    assert [usd(None), usd(0.0), usd(0.00001), usd(0.01234), usd(12.345), usd(1234.5)] == [
        "price unknown",
        "$0.0000",
        "<$0.0001",
        "$0.0123",
        "$12.35",
        "$1,234.50",
    ]


def metering(budget: Budget | None = None) -> Metering:
    # $1/M input, $10/M output for every kind of input: easy figures.
    override = PriceOverride(input=1.0, output=10.0)
    return Metering(Pricer("m", provider="openai", base_url="http://l/v1", override=override),
                    budget or Budget())  # fmt: skip


def test_the_ledger_adds_steps_sub_agents_and_turns() -> None:
    ledger = CostLedger(metering(), CostLine("session"))
    ledger.begin_turn(1)
    ledger.step(TokenUsage(input_other=1_000, output=100))  # 1000×1 + 100×10 = 2000 per M
    ledger.subagent("c1", "look around", TokenUsage(input_other=5_000), 0.005)
    ledger.begin_turn(2)
    ledger.step(TokenUsage(input_other=3_000))  # 3000 per M
    report = ledger.report()
    assert report.session.cost_usd == pytest.approx(0.002 + 0.005 + 0.003)
    assert report.session.usage.input == 9_000
    assert report.turn is not None and report.turn.cost_usd == pytest.approx(0.003)
    assert [(s.label, s.cost_usd) for s in report.subagents] == [("look around", 0.005)]
    assert ledger.metering.budget.spent == pytest.approx(0.005)  # sub-agents add as they run


def test_a_tool_calls_cost_is_its_results_tokens_as_input() -> None:
    ledger = CostLedger(metering(), CostLine("session"))
    ledger.tool_result("c1", "read_file", ToolResult(output="x" * 4_000))  # 4000 chars: 1000 tok
    ledger.tool_result("c2", "grep", ToolResult(output="y" * 40))
    tools = ledger.report().tools
    assert [(t.name, t.tokens) for t in tools] == [("read_file", 1_000), ("grep", 10)]
    assert tools[0].cost_usd == pytest.approx(0.001)  # 1000 × $1/M


def test_an_unknown_price_stays_unknown_in_every_total() -> None:
    unknown = Metering(Pricer("m", provider="scripted"), Budget())
    ledger = CostLedger(unknown, CostLine("session"))
    ledger.begin_turn(1)
    ledger.step(TokenUsage(input_other=10))
    report = ledger.report()
    assert report.session.cost_usd is None and report.session.usage.input == 10
    assert report.turn is not None and report.turn.cost_usd is None


def test_budget_messages_name_the_spend_and_the_limit() -> None:
    budget = Budget(max_session_usd=1.0, max_turn_usd=0.5)
    budget.spent = 0.3
    assert budget.exceeded() is None and budget.warnings() == []
    budget.spent = 0.45  # 90 % of the turn's $0.50
    assert budget.warnings() == ["$0.4500 spent: 90% of this turn's budget ($0.5000)."]
    assert budget.warnings() == []  # once
    budget.spent = 0.5
    assert "This turn spent $0.5000 of its $0.5000 budget" in (budget.exceeded() or "")
    budget.begin_turn()
    assert budget.exceeded() is None
    budget.spent = 1.0
    assert "The session spent $1.00 of its $1.00 budget" in (budget.exceeded() or "")


def test_a_reopened_session_prices_each_step_it_had() -> None:
    pricer = Pricer("claude-sonnet-4-5", provider="anthropic")
    one = TokenUsage(input_other=150_000, output=1_000)
    totals = [one, one + one, one + one]  # the third repeats the total (a rewind says it again)
    events = [ev.UsageChanged(total=t, context_tokens=0, context_window=1) for t in totals]
    # Each step alone is under the 200k tier: 150000×3 + 1000×15 = 465,000 per M, twice.
    shown, spent = priced(events, lambda model: pricer)
    assert spent.cost_usd == pytest.approx(2 * 0.465)
    costs = [e.cost_usd for e in shown if isinstance(e, ev.UsageChanged)]
    assert costs == pytest.approx([0.465, 0.93, 0.93])


def test_a_budget_passed_in_one_step_is_stopped_not_warned_of() -> None:
    budget = Budget(max_session_usd=1.0)
    budget.spent = 1.2
    assert budget.warnings() == [] and budget.exceeded() is not None
