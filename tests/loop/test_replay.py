"""Replaying a log as loop events, and folding a log with rewinds, old records included."""

from __future__ import annotations

from pathlib import Path

from tests.session.session_log import USAGE, session_records
from tui_agent.context import (
    Compaction,
    Prompt,
    Record,
    Rewind,
    TurnBegin,
    TurnEnd,
    TurnOutcome,
    fold,
    load_history,
    parse_log,
)
from tui_agent.loop import events as ev
from tui_agent.loop.replay import replay
from tui_agent.vocab import user_message


def turn(number: int, text: str) -> list[Record]:
    return [
        TurnBegin(turn_id=number, prompt_ids=()),
        Prompt(prompt_id=f"p{number}", message=user_message(text)),
        TurnEnd(turn_id=number, result=TurnOutcome(type="completed", steps=0)),
    ]


def user_texts(records: list[Record]) -> list[str]:
    return [entry.message.text for entry in fold(records)]


def test_a_tool_result_logged_before_outcomes_were_recorded_still_replays() -> None:
    old = (
        b'{"type":"session.meta","ts":1,"session_id":"s","workspace":"/w"}\n'
        b'{"type":"turn.begin","ts":2,"turn_id":1,"prompt_ids":["p1"]}\n'
        b'{"type":"step.begin","ts":3,"uuid":"u","turn_id":1,"step":1}\n'
        b'{"type":"tool.call","ts":4,"step_uuid":"u","call":{"id":"c","name":"shell",'
        b'"arguments":"{}"}}\n'
        b'{"type":"tool.result","ts":5,"call_id":"c","output":"boom","is_error":true}\n'
    )
    events = replay(parse_log(old), context_window=1000).events
    finished = [e for e in events if isinstance(e, ev.ToolFinished)]
    assert [(e.status, e.output) for e in finished] == [("failed", "boom")]


def test_replay_totals_the_usage_of_every_answered_step() -> None:
    result = replay(session_records(), context_window=1000)
    # Two completed steps and one cancelled after its calls; the failed attempt counts nothing.
    assert result.usage == USAGE + USAGE + USAGE
    assert result.context_tokens == 120  # the compaction came last


def test_fold_goes_back_to_the_turn_a_rewind_names() -> None:
    records = [*turn(1, "one"), *turn(2, "two"), *turn(3, "three"), Rewind(turn=1)]
    assert user_texts(records) == ["one"]
    assert user_texts([*records, *turn(4, "four")]) == ["one", "four"]


def test_a_rewind_reaches_back_past_a_compaction(tmp_path: Path) -> None:
    records = [
        *turn(1, "one"),
        *turn(2, "two"),
        Compaction(summary="they said one and two"),
        *turn(3, "three"),
        Rewind(turn=1),
    ]
    log = tmp_path / "events.jsonl"
    log.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    assert [e.message.text for e in load_history(log)] == ["one"]


def test_replay_of_a_rewind_drops_the_rewound_turns_but_not_the_tokens_spent() -> None:
    records = [*session_records()[:-1], Rewind(turn=1)]
    result = replay(records, context_window=1000)
    started = [e.texts for e in result.events if isinstance(e, ev.TurnStarted)]
    assert started == [("fix the greeting",)]
    last_usage = [e for e in result.events if isinstance(e, ev.UsageChanged)][-1]
    assert last_usage.total == USAGE + USAGE + USAGE
