"""`tui-agent replay --check`: exit 0 and "identical" for a session that reruns the same, exit 1
and the first divergence for one that does not, a table for `--all`, exit 2 for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.rerun.corpus import Corpus
from tui_agent.cli import main


def test_check_says_identical_for_the_session_and_its_sub_agent(
    corpus: Corpus, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", "--check", str(corpus.story.events_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("events.jsonl: identical: ")
    assert lines[1].startswith("tasks/t_0.jsonl: identical: ")


def test_check_exits_1_with_the_first_divergence(
    corpus: Corpus, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [json.loads(line) for line in corpus.crash.events_path.read_text().splitlines()]
    at = next(i for i, line in enumerate(lines) if line["type"] == "content.part")
    lines[at]["part"]["text"] = "Fist."  # what the model said is on record: this is not it
    del lines[at + 1]  # its step.end: the answer no longer ends where the log says
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["replay", "--check", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"events.jsonl: record {at + 2} differs")
    assert "expected: turn.end" in out


def test_check_all_prints_a_table_of_the_workspaces_sessions(
    corpus: Corpus,
    corpus_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("TUI_AGENT_HOME", str(corpus_home))
    workspace = corpus.story.workspace
    assert main(["replay", "--check", "--all", "--workspace", str(workspace)]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split() == ["session", "records", "result"]
    assert sorted(row.split()[0] for row in rows) == sorted(
        [corpus.story.session_id, corpus.crash.session_id, corpus.asked.session_id]
    )
    assert all("identical" in row for row in rows)
    assert any("identical (2 logs)" in row for row in rows)  # the story and its sub-agent


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["replay", "--check", "no-such-session"], "no session 'no-such-session'"),
        (["replay", "--all"], "--all goes with --check"),
        (["replay", "--check"], "name a session"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err
