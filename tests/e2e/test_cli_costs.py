"""Money on the command line: `cost_usd` in jsonl, and `--max-budget-usd` stopping before a
request (the local server counts what reached it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.test_cli import events_of, run_cli
from tests.support.openai_server import scripted_openai_server

# Every scripted step reports 100 prompt tokens and 20 completion tokens (the server's
# default), so at these prices one step costs 100 × $1000/M + 20 × $5000/M = $0.10 + $0.10.
PRICES = """
[models."test-model"]
price_input_per_mtok = 1000.0
price_output_per_mtok = 5000.0
"""
STEP_USD = 0.2


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    return root


def write_config(text: str) -> None:
    (Path(os.environ["TUI_AGENT_HOME"]) / "config.toml").write_text(text)


def read_steps(count: int) -> list[dict[str, object]]:
    call = {"name": "read_file", "arguments": {"path": "a.txt"}}
    return [{"tool_calls": [call]} for _ in range(count)] + [{"text": "Done."}]


def test_turn_finished_carries_the_turns_usage_and_cost(workspace: Path) -> None:
    write_config(PRICES)
    with scripted_openai_server(read_steps(1)) as server:
        done = run_cli(server, workspace, "-p", "read", "--output-format", "jsonl", "--yolo")
    assert done.returncode == 0, done.stderr
    events = events_of(done.stdout)
    finished = events[-1]
    assert finished["type"] == "turn.finished"
    # Two requests: 200 input tokens, 40 output tokens, 2 × $0.20.
    assert finished["usage"]["input_other"] == 200 and finished["usage"]["output"] == 40
    assert finished["usage"]["cost_usd"] == pytest.approx(2 * STEP_USD)
    usage = [e for e in events if e["type"] == "usage"]
    assert [round(e["cost_usd"], 6) for e in usage] == [0.2, 0.4]


def test_an_unknown_model_has_tokens_and_no_price(workspace: Path) -> None:
    with scripted_openai_server(read_steps(0)) as server:
        done = run_cli(server, workspace, "-p", "hi", "--output-format", "jsonl")
    assert done.returncode == 0, done.stderr
    finished = events_of(done.stdout)[-1]
    assert finished["usage"]["input_other"] == 100 and finished["usage"]["cost_usd"] is None


def test_the_budget_stops_before_the_request_that_would_pass_it(workspace: Path) -> None:
    write_config(PRICES)
    with scripted_openai_server(read_steps(5)) as server:
        done = run_cli(
            server, workspace, "-p", "read", "--output-format", "jsonl", "--yolo",
            "--max-budget-usd", "0.5",
        )  # fmt: skip
        requests = len(server.requests)
    # Spent after each request: $0.20, $0.40, $0.60. The gate lets the third out ($0.40 is
    # under $0.50) and keeps the fourth: the server saw three.
    assert requests == 3
    assert done.returncode == 1
    assert "loop.budget_exceeded" in done.stderr
    assert "$0.6000" in done.stderr and "$0.5000" in done.stderr
    events = events_of(done.stdout)
    # $0.40 is 80 % of $0.50: said once, before the stop.
    warnings = [e["text"] for e in events if e["type"] == "notice" and e["level"] == "warning"]
    assert warnings == ["$0.4000 spent: 80% of the session's budget ($0.5000)."]
    finished = events[-1]
    assert finished["result"]["error"]["code"] == "loop.budget_exceeded"
    assert finished["usage"]["cost_usd"] == pytest.approx(3 * STEP_USD)


def test_a_turn_budget_from_config_stops_the_turn(workspace: Path) -> None:
    write_config("max_turn_budget_usd = 0.3\n" + PRICES)
    with scripted_openai_server(read_steps(5)) as server:
        done = run_cli(server, workspace, "-p", "read", "--yolo")
        requests = len(server.requests)
    assert requests == 2  # $0.20 < $0.30 lets the second out; $0.40 keeps the third
    assert done.returncode == 1
    assert "This turn spent $0.4000 of its $0.3000 budget" in done.stderr


def test_a_budget_must_be_positive(workspace: Path) -> None:
    with scripted_openai_server([]) as server:
        done = run_cli(server, workspace, "-p", "hi", "--max-budget-usd", "0")
    assert done.returncode == 2 and "--max-budget-usd must be more than 0" in done.stderr
