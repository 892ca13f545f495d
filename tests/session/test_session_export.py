"""`tui-agent export`: Markdown and JSON lines against golden files, HTML as one page."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.session.session_log import session_records
from tui_agent.cli import main
from tui_agent.context import (
    ContentPartDone,
    Prompt,
    Record,
    RetryRecorded,
    StepBegin,
    StepEnd,
    TurnBegin,
    TurnEnd,
    TurnOutcome,
)
from tui_agent.session import Attachment, Session, attach, export_session
from tui_agent.vocab import FinishReason, TextPart, user_message

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
    assert '<summary>Thinking</summary><div class="thinking"><p>A typo.</p>' in page
    assert '<span class="add">+print(&quot;hello&quot;)</span>' in page
    for seen in ("⊘ shell (stopped)", "interrupted", "turn failed: llm.auth: bad key"):
        assert seen in page


def test_export_of_an_unknown_session_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "nope"]) == 2
    assert "no session 'nope'" in capsys.readouterr().err


def _answered(prompt: str, answer: str, *, retry: bool = False) -> list[Record]:
    """One turn: `prompt`, optionally a failed attempt and its retry, then `answer`."""
    failed: list[Record] = [
        StepBegin(uuid="s0", turn_id=1, step=1),
        StepEnd(uuid="s0", finish_reason=FinishReason.ERROR),
        RetryRecorded(
            step=1,
            attempt=2,
            max_attempts=5,
            delay_s=3.0,
            error_code="llm.server",
            message="Internal error\nmore detail",
            status=500,
        ),
    ]
    return [
        TurnBegin(turn_id=1, prompt_ids=("p1",)),
        Prompt(prompt_id="p1", message=user_message(prompt)),
        *(failed if retry else []),
        StepBegin(uuid="s1", turn_id=1, step=1),
        ContentPartDone(step_uuid="s1", part=TextPart(text=answer)),
        StepEnd(uuid="s1", finish_reason=FinishReason.END_TURN),
        TurnEnd(turn_id=1, result=TurnOutcome(type="completed", steps=1)),
    ]


def test_exports_show_retries_and_the_command_output_sent_with_a_prompt() -> None:
    prompt = attach("why does it fail?", [Attachment("!make test", "1 failed: test_greet")])
    records = _answered(prompt, "**Because** of a typo.", retry=True)
    retry = "⟳ HTTP 500 · Internal error: retried (attempt 2/5)"

    markdown = export_session(records, "md")
    assert f"> **{retry}**" in markdown
    assert "why does it fail?\n\n**$ make test (its output went with the prompt)**" in markdown
    assert "```\n1 failed: test_greet\n```" in markdown
    assert "<context" not in markdown

    page = export_session(records, "html")
    assert f'<div class="marker retry">{retry}</div>' in page
    assert "<summary>$ make test (its output went with the prompt)</summary>" in page
    assert "<pre>1 failed: test_greet</pre>" in page
    assert "<p><strong>Because</strong> of a typo.</p>" in page


def test_the_html_export_renders_markdown_but_nothing_that_runs_or_fetches() -> None:
    answer = (
        "# Plan\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n"
        "![logo](http://example.com/x.png) [bad](javascript:alert(1)) [docs](https://e.org)\n\n"
        "| a | b |\n|---|---|\n| 1 | `x<y` |\n\n```python\nprint('<b>')\n```"
    )
    page = export_session(_answered("plan it", answer), "html")
    assert "<h1>Plan</h1>" in page and "<table>" in page and "<code>x&lt;y</code>" in page
    assert '<code class="language-python">print(' in page
    assert '<a href="https://e.org">docs</a>' in page
    assert "<script" not in page and "<img" not in page  # escaped: text, not elements
    assert 'href="javascript' not in page
    assert "&lt;script&gt;" in page  # shown as the text it is


def test_a_fence_is_longer_than_every_backtick_run_in_its_text() -> None:
    from tui_agent.session._export import _fence

    assert _fence("a ``` b ````` c `", "sh") == "``````sh\na ``` b ````` c `\n``````"
    assert _fence("no ticks here\n") == "```\nno ticks here\n```"
    assert _fence("````") == "`````\n````\n`````"
