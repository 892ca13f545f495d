"""`replay --check`: a recorded session reruns through the real loop identically, and a log
that was tampered with fails at the record where the tampering shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.rerun.corpus import Corpus
from tui_agent.context import ApprovalAnswered, fold, read_log
from tui_agent.loop.replay import replay
from tui_agent.rerun import check_path
from tui_agent.rerun._check import YOLO_FALLBACK
from tui_agent.rerun._script import read_script

R3 = Path(__file__).parents[1] / "loop" / "data" / "r3" / "session.jsonl"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _index(lines: list[dict[str, Any]], kind: str, **fields: Any) -> int:
    return next(
        i
        for i, line in enumerate(lines)
        if line["type"] == kind and all(line.get(k) == v for k, v in fields.items())
    )


async def test_the_scripted_story_reruns_identically(corpus: Corpus) -> None:
    kinds = {line["type"] for line in _lines(corpus.story.events_path)}
    # The story holds what the rerun must reproduce (a sub-agent's usage passes through).
    assert {"retry", "steer", "compaction", "notification", "usage.added"} <= kinds
    assert '"name":"todo_write"' in corpus.story.events_path.read_text()  # runs for real
    verdict = await check_path(corpus.story.events_path)
    assert verdict.describe() == f"identical: {verdict.records} records"


async def test_a_sub_agents_log_reruns_identically(corpus: Corpus) -> None:
    (child,) = (corpus.story.dir / "tasks").glob("*.jsonl")
    verdict = await check_path(child)
    assert verdict.ok, verdict.describe()


async def test_a_session_resumed_after_a_crash_reruns_in_two_processes(corpus: Corpus) -> None:
    records = read_log(corpus.crash.events_path)
    lives = read_script(records).lives
    assert [life.crashed for life in lives] == [True, False]
    verdict = await check_path(corpus.crash.events_path)
    assert verdict.ok, verdict.describe()


async def test_the_round_3_log_still_reruns_identically() -> None:
    verdict = await check_path(R3)
    assert verdict.ok, verdict.describe()


async def test_a_changed_tool_result_fails_at_that_record(corpus: Corpus, tmp_path: Path) -> None:
    lines = _lines(corpus.story.events_path)
    # The loop words a stopped call's result itself: the log's copy must say the same.
    at = _index(lines, "tool.result", call_id="c_0")
    lines[at]["output"] = "It finished fine."
    verdict = await check_path(_write(tmp_path / "events.jsonl", lines))
    assert verdict.divergence is not None
    assert verdict.divergence.index == at
    assert verdict.describe().startswith(f"record {at + 1} differs")
    assert "It finished fine." in verdict.describe()


@pytest.mark.parametrize("kind", ["turn.begin", "step.end"])
async def test_a_removed_record_fails_where_it_was(
    corpus: Corpus, tmp_path: Path, kind: str
) -> None:
    lines = _lines(corpus.story.events_path)
    at = [i for i, line in enumerate(lines) if line["type"] == kind][2]
    del lines[at]
    verdict = await check_path(_write(tmp_path / "events.jsonl", lines))
    assert verdict.at == at, verdict.describe()
    assert verdict.describe().startswith((f"record {at + 1} ", f"cannot replay: record {at + 1}:"))


async def test_two_swapped_records_fail_at_the_first(corpus: Corpus, tmp_path: Path) -> None:
    lines = _lines(corpus.story.events_path)
    at = _index(lines, "steer")
    lines[at], lines[at + 1] = lines[at + 1], lines[at]
    verdict = await check_path(_write(tmp_path / "events.jsonl", lines))
    assert verdict.divergence is not None, verdict.describe()
    assert verdict.divergence.index == at


async def test_a_damaged_line_is_named(corpus: Corpus, tmp_path: Path) -> None:
    text = corpus.crash.events_path.read_text().splitlines()
    text[3] = text[3][:20]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(text) + "\n")
    verdict = await check_path(path)
    assert verdict.describe() == "cannot replay: line 4 is not a record"


async def test_a_session_in_ask_mode_reruns_answering_as_the_person_did(corpus: Corpus) -> None:
    lines = _lines(corpus.asked.events_path)
    answers = [line for line in lines if line["type"] == "approval.answered"]
    assert [(a["call_id"], a["decision"], a["reason"], a["stop"]) for a in answers] == [
        ("a_0", "once", None, None),
        ("b_0", "deny", "not that one, it is too loud", None),
        ("c_0", "always", None, None),
        ("e_0", "deny", "The turn was cancelled.", "cancel"),
        ("f_0", "deny", "The user stopped this call.", "stop_call"),
    ]
    assert answers[2]["rules"] == ["shell(echo:*)"]  # and d_0 ran unasked under it
    verdict = await check_path(corpus.asked.events_path)
    assert verdict.describe() == f"identical: {verdict.records} records"


async def test_a_log_older_than_logged_answers_says_it_reran_in_yolo() -> None:
    verdict = await check_path(R3)
    assert verdict.ok
    assert verdict.describe().splitlines()[1] == YOLO_FALLBACK


@pytest.mark.parametrize(
    ("call_id", "changed"),
    [
        ("a_0", {"decision": "deny"}),  # the rerun denies what ran: its result differs
        ("b_0", {"decision": "once", "reason": None}),  # the rerun runs what was denied
        ("b_0", {"reason": "another reason"}),  # the denial's words differ
    ],
)
async def test_a_changed_decision_fails_at_the_result_it_decides(
    corpus: Corpus, tmp_path: Path, call_id: str, changed: dict[str, Any]
) -> None:
    lines = _lines(corpus.asked.events_path)
    lines[_index(lines, "approval.answered", call_id=call_id)].update(changed)
    verdict = await check_path(_write(tmp_path / "events.jsonl", lines))
    assert verdict.at == _index(lines, "tool.result", call_id=call_id), verdict.describe()


async def test_an_answer_after_its_calls_result_cannot_be_replayed(
    corpus: Corpus, tmp_path: Path
) -> None:
    lines = _lines(corpus.asked.events_path)
    at = _index(lines, "approval.answered", call_id="a_0")
    lines[at], lines[at + 1] = lines[at + 1], lines[at]
    verdict = await check_path(_write(tmp_path / "events.jsonl", lines))
    assert verdict.at == at + 1
    assert verdict.describe() == (
        f'cannot replay: record {at + 2}: an answer about call "a_0", which had its result already'
    )


def test_logged_answers_change_neither_the_history_nor_the_resumed_transcript(
    corpus: Corpus,
) -> None:
    records = read_log(corpus.asked.events_path)
    bare = [record for record in records if not isinstance(record, ApprovalAnswered)]
    assert len(bare) == len(records) - 5
    assert fold(records) == fold(bare)
    assert replay(records, context_window=1000).events == replay(bare, context_window=1000).events
