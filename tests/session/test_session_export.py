"""`tui-agent export`: Markdown and JSON lines against golden files, HTML as one page."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.session.session_log import session_records
from tui_agent.cli import main
from tui_agent.session import Session

GOLDEN = Path(__file__).parent / "golden"
UPDATE = bool(os.environ.get("UPDATE_GOLDEN"))


@pytest.fixture
def session(tmp_path: Path) -> Session:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = Session.create(workspace, now=1_780_000_000.0)
    records = session_records(session.session_id)
    session.events_path.write_text(
        "".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8"
    )
    return session


def golden(name: str, text: str, session: Session) -> None:
    text = text.replace(session.session_id, "SESSION")
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", ["md", "jsonl"])
def test_export_matches_the_golden_file(
    fmt: str, session: Session, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", session.session_id, "--format", fmt]) == 0
    golden(f"session.{fmt}", capsys.readouterr().out, session)


def test_export_without_an_id_takes_the_latest_session_of_the_workspace(
    session: Session, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "--workspace", str(session.workspace)]) == 0
    assert capsys.readouterr().out.startswith(f"# Session {session.session_id}\n")


def test_html_export_is_one_self_contained_page(session: Session, tmp_path: Path) -> None:
    out = tmp_path / "session.html"
    assert main(["export", session.session_id, "--format", "html", "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script" not in page and "<link" not in page and "src=" not in page
    assert "<details><summary>Thinking</summary><div>A typo.</div></details>" in page
    assert '<span class="add">+print(&quot;hello&quot;)</span>' in page
    for seen in ("⊘ shell (stopped)", "interrupted", "turn failed: llm.auth: bad key"):
        assert seen in page


def test_export_of_an_unknown_session_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "nope"]) == 2
    assert "no session 'nope'" in capsys.readouterr().err
