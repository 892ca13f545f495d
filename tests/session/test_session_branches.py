"""The session tree from the command line: `tui-agent sessions --tree` draws the branches (the
current one marked) and `tui-agent export --branch N` exports one of them, by default the one
the session is on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_agent.cli import main
from tui_agent.context import (
    BranchSwitch,
    FileCheckpoint,
    Prompt,
    Record,
    SessionMeta,
    StepBegin,
    StepEnd,
    TurnBegin,
    TurnEnd,
    TurnOutcome,
)
from tui_agent.session import Session
from tui_agent.vocab import FinishReason, TokenUsage, user_message


def turn(number: int, prompt: str, *, files: tuple[str, ...] = ()) -> list[Record]:
    uuid = f"s{number}"
    return [
        TurnBegin(turn_id=number, ts=1_780_000_000.0 + number * 60),
        Prompt(prompt_id=f"p{number}", message=user_message(prompt)),
        StepBegin(uuid=uuid, turn_id=number, step=1),
        *(
            FileCheckpoint(call_id=f"c{number}", path=path, before=None, after="0" * 64)
            for path in files
        ),
        StepEnd(
            uuid=uuid,
            finish_reason=FinishReason.END_TURN,
            usage=TokenUsage(input_other=100, output=10),
        ),
        TurnEnd(turn_id=number, result=TurnOutcome(type="completed", steps=1)),
    ]


@pytest.fixture
def session(tmp_path: Path) -> Session:
    """first → second (branch 1), then a fork after first: first → third (branch 2, where the
    session is)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = Session.create(workspace)
    records: list[Record] = [
        SessionMeta(session_id=session.session_id, workspace=str(workspace)),
        *turn(0, "first question", files=("a.py",)),
        *turn(1, "second try"),
        BranchSwitch(turn=0),
        *turn(2, "third way", files=("b.py", "c.py")),
    ]
    session.events_path.write_text(
        "".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8"
    )
    return session


def test_sessions_tree_draws_each_branch_and_marks_the_current_turn(
    session: Session, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sessions", "--tree", "--workspace", str(session.workspace)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(session.session_id)
    first, second, third = lines[1:]
    assert "branch 1  ❯ first question" in first and "1 file" in first
    assert "❯ second try" in second and "(branch: 1 file," in second
    assert "branch 2  ❯ third way" in third and "(branch: 3 files," in third
    assert "◀ current" in third and "◀ current" not in first + second
    assert second.index("── ") == third.index("── ") > first.index("── ")  # both grew from first


def test_export_takes_the_current_branch_unless_told_another(
    session: Session, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", session.session_id]) == 0
    current = capsys.readouterr().out
    assert "third way" in current and "second try" not in current
    assert main(["export", session.session_id, "--branch", "1"]) == 0
    other = capsys.readouterr().out
    assert "first question" in other and "second try" in other and "third way" not in other


def test_export_of_a_branch_that_is_not_there_names_the_ones_that_are(
    session: Session, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.md"
    assert main(["export", session.session_id, "--branch", "3", "-o", str(out)]) == 2
    assert "no branch 3: this session has 2" in capsys.readouterr().err
    assert not out.exists()
