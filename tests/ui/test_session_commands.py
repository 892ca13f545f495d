"""Commands that act on the session as a whole: /model keeps the approval mode, /undo, /rewind
and /export (on a stand-in loop; `test_rewind.py` drives the real one)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.session.session_log import session_records
from tests.ui.fake_loop import INFO, FakeLoop
from tests.ui.real_loop import until
from tui_agent.loop.api import RestorePlan
from tui_agent.session import Session
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.hooks import SessionHooks
from tui_agent.ui.rewind_screen import RewindPicker


async def test_slash_model_reopens_the_session_in_the_approval_mode_the_person_chose() -> None:
    old = FakeLoop(info=replace(INFO, approval_mode="ask"))
    reopened = FakeLoop(info=replace(INFO, approval_mode="ask", model="other"))
    asked: list[tuple[str, str]] = []

    async def switch_model(session_id: str, model: str) -> FakeLoop:
        asked.append((session_id, model))
        return reopened

    app = TuiAgentApp(old, hooks=SessionHooks(switch_model=switch_model))
    async with app.run_test(size=(120, 36)) as pilot:
        app.run_slash("approval", "yolo")
        app.run_slash("model", "other")
        await pilot.pause()
        assert asked == [(INFO.session_id, "other")] and app.loop is reopened and old.closed
        assert reopened.info.approval_mode == "yolo"
        assert app.vm.status.approval_mode == "yolo"


async def test_slash_export_writes_the_session_into_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = Session.create(workspace)
    records = session_records(session.session_id)
    session.events_path.write_text("".join(r.model_dump_json() + "\n" for r in records))
    loop = FakeLoop(info=replace(INFO, session_id=session.session_id, workspace=str(workspace)))
    app = TuiAgentApp(loop)
    async with app.run_test(size=(120, 36)) as pilot:
        app.run_slash("export", "html")
        await until(pilot, lambda: "exported" in getattr(app.vm.blocks[-1], "text", ""))
    page = (workspace / f"session-{session.session_id}.html").read_text(encoding="utf-8")
    assert "turn failed: llm.auth: bad key" in page


async def test_escape_twice_on_an_empty_input_opens_the_rewind_picker() -> None:
    plan = RestorePlan(0, "fix it", None, ("a.py",), ("rm -rf build",), ())
    app = TuiAgentApp(FakeLoop(plans=[plan]))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("escape", "escape")
        await until(pilot, lambda: isinstance(app.screen, RewindPicker))


async def test_escape_on_a_draft_clears_it_without_opening_the_picker() -> None:
    app = TuiAgentApp(FakeLoop(plans=[RestorePlan(0, "fix it", None, (), (), ())]))
    async with app.run_test(size=(120, 36)) as pilot:
        app.prompt_input.insert("draft")
        await pilot.press("escape")
        await pilot.pause()
        assert app.prompt_input.text == "" and not isinstance(app.screen, RewindPicker)


async def test_undo_with_nothing_to_undo_says_so() -> None:
    app = TuiAgentApp(FakeLoop())
    async with app.run_test(size=(120, 36)) as pilot:
        app.run_slash("undo")
        await until(pilot, lambda: "nothing to undo" in getattr(app.vm.blocks[-1], "text", ""))
