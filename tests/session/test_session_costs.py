"""What a logged session cost, in exports and `tui-agent sessions` (priced per step)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.session.session_log import session_records
from tui_agent.cli import main
from tui_agent.context import SessionMeta
from tui_agent.session import Session
from tui_agent.session._costs import api_host


def logged(tmp_path: Path, api: str | None) -> Session:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = Session.create(workspace, now=1_780_000_000.0)
    records = session_records(session.session_id)
    meta = records[0]
    assert isinstance(meta, SessionMeta)
    records[0] = meta.model_copy(update={"provider": "openai", "model": "gpt-4.1", "api_host": api})
    session.events_path.write_text("".join(r.model_dump_json() + "\n" for r in records))
    return session


# The log has three steps, each 1000 uncached input, 500 cached input and 200 output tokens.
# gpt-4.1: $2/M input, $0.50/M cached input, $8/M output:
# 1000×2 + 500×0.5 + 200×8 = 2000 + 250 + 1600 = 3850 per M = $0.00385 a step.
STEP = 0.00385


def test_exports_say_what_the_session_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = logged(tmp_path, "https://api.openai.com")
    assert main(["export", session.session_id, "--format", "jsonl"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    costs = [e["cost_usd"] for e in events if e["type"] == "usage"]
    assert costs == pytest.approx([STEP, 2 * STEP, 3 * STEP])
    assert main(["export", session.session_id, "--format", "md"]) == 0
    usage = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert "(1500 read from the cache, 0 written to it)" in usage
    assert usage.endswith("cost $0.0116")  # 3 × $0.00385 = $0.01155


def test_a_local_server_serving_a_known_name_has_no_price(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = logged(tmp_path, "http://127.0.0.1:8080")
    assert main(["export", session.session_id, "--format", "md"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("cost price unknown")


def test_sessions_list_tokens_and_cost(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = logged(tmp_path, "https://api.openai.com")
    assert main(["sessions", "--workspace", str(session.workspace)]) == 0
    row = capsys.readouterr().out.splitlines()[0].split()
    # 3 steps × (1500 input + 200 output) = 5100 tokens
    assert row[:4] == [session.session_id, "5,100", "tok", "$0.0116"]


def test_the_log_keeps_only_the_scheme_and_host_of_the_endpoint() -> None:
    assert api_host("https://user:key@api.example.com:8443/v1?key=secret") == (
        "https://api.example.com:8443"
    )
    assert api_host(None) is None and api_host("not a url") is None
