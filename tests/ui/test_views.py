"""What the transcript shows and where the keys go: no widget traps typed text, tool rows open
with Ctrl+O or Enter, Home and End reach either end of a long session, transcript search finds
parked blocks, a command's answer is followed, and `!command` rows tell how the command ended."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.ui.fake_loop import FakeLoop
from tests.ui.real_loop import until
from tests.ui.scenes import make_app, settle
from tests.ui.test_flows import app_on, send
from tests.ui.test_keys import running, type_text
from tui_agent.loop import events as ev
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.view_model import MarkerBlock, ToolBlock
from tui_agent.ui.widgets.blocks import ToolCallBlock
from tui_agent.ui.widgets.transcript import MAX_MOUNTED


def finished_call(loop: FakeLoop, call_id: str = "c1", output: str = "one\ntwo") -> None:
    loop.emit(
        ev.TurnStarted(turn_id=1, prompt_ids=("p1",), texts=("look",)),
        ev.ToolStarted(id=call_id, name="grep", arguments='{"pattern": "e", "path": "a.txt"}'),
        ev.ToolFinished(
            id=call_id, name="grep", outcome="succeeded", output=output, is_error=False
        ),
        ev.TurnFinished(turn_id=1, text="", result=ev.TurnResult(type="completed", steps=1)),
    )


def row(app: TuiAgentApp) -> ToolCallBlock:
    return app.transcript.query(ToolCallBlock).last()


def notes(loop: FakeLoop, count: int) -> None:
    loop.emit(*(ev.Notice(level="info", text=f"note {n}") for n in range(count)))


# ---------------------------------------------------------------- keys never trapped (item 4)


async def test_text_typed_after_clicking_a_tool_row_goes_to_the_prompt() -> None:
    async with running() as (app, pilot, loop):
        finished_call(loop)
        await until(pilot, lambda: bool(app.transcript.query(ToolCallBlock)))
        await until(pilot, lambda: app.transcript.settled and row(app).region.height > 0)
        await pilot.pause()
        await pilot.click(ToolCallBlock)
        assert app.focused is row(app) and row(app).expanded  # a click opens it
        await type_text(pilot, "fix it")
        await pilot.press("enter")
        await pilot.pause()
        assert ("submit", ("fix it", False)) in loop.calls
        assert row(app).expanded  # Enter went with the text, not to the row


async def test_tab_from_an_empty_prompt_then_typing_still_fills_the_prompt() -> None:
    async with running() as (app, pilot, loop):
        finished_call(loop)
        await until(pilot, lambda: bool(app.transcript.query(ToolCallBlock)))
        await pilot.press("tab")
        assert app.focused is not app.prompt_input
        await type_text(pilot, "hello")
        assert app.focused is app.prompt_input
        assert app.prompt_input.text == "hello"


async def test_enter_on_a_focused_tool_row_expands_and_folds_it() -> None:
    async with running() as (app, pilot, loop):
        finished_call(loop)
        await until(pilot, lambda: bool(app.transcript.query(ToolCallBlock)))
        row(app).focus()
        await pilot.press("enter")
        assert row(app).expanded
        await pilot.press("enter")
        assert not row(app).expanded


async def test_ctrl_o_from_the_prompt_expands_and_folds_the_last_tool_call() -> None:
    async with running() as (app, pilot, loop):
        finished_call(loop, "c1")
        finished_call(loop, "c2")
        await until(pilot, lambda: len(app.transcript.query(ToolCallBlock)) == 2)
        first, last = app.transcript.query(ToolCallBlock)
        await pilot.press("ctrl+o")
        assert last.expanded and not first.expanded
        assert app.focused is app.prompt_input
        await pilot.press("ctrl+o")
        assert not last.expanded


async def test_help_names_the_keys_that_open_tool_rows_and_search() -> None:
    async with running() as (app, pilot, _loop):
        await type_text(pilot, "/help")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.vm.blocks[-1], MarkerBlock))
        help_text = app.vm.blocks[-1].text  # type: ignore[union-attr]
        assert "Ctrl+O" in help_text and "expand or fold the last tool call" in help_text
        assert "Ctrl+F" in help_text and "/find TEXT" in help_text


# ---------------------------------------------------------------- a long session (item 13)


async def test_one_home_reaches_the_start_of_a_long_session_and_end_comes_back() -> None:
    async with running() as (app, pilot, loop):
        notes(loop, 300)  # many batches of parked blocks: one Home must pass them all
        await until(pilot, lambda: app.transcript.settled and app.transcript.hidden_count > 200)
        await pilot.press("home")  # from the empty prompt
        transcript = app.transcript
        await until(pilot, lambda: transcript.hidden_count == 0 and transcript.scroll_y == 0)
        assert transcript.later_count > 0 and not transcript.following
        loop.emit(ev.Notice(level="info", text="newest"))  # parked below while reading the top
        await until(pilot, lambda: transcript.later_count > 0 and transcript.settled)
        await pilot.press("end")
        await until(pilot, lambda: transcript.following and transcript.later_count == 0)
        mounted_ids = list(transcript._widgets)
        assert mounted_ids[-1] == app.vm.blocks[-1].id  # the newest block is shown
        assert len(mounted_ids) <= MAX_MOUNTED


async def test_page_down_from_the_start_continues_into_parked_blocks() -> None:
    async with running(size=(120, 20)) as (app, pilot, loop):
        notes(loop, 300)
        await until(pilot, lambda: app.transcript.settled and app.transcript.hidden_count > 200)
        await pilot.press("ctrl+home")
        transcript = app.transcript
        await until(pilot, lambda: transcript.hidden_count == 0)
        later = transcript.later_count
        for _ in range(40):
            await pilot.press("pagedown")
            if transcript.later_count < later:
                break
        assert transcript.later_count < later


# ---------------------------------------------------------------- transcript search (item 13)


def found(app: TuiAgentApp) -> list[int]:
    return [i for i, w in app.transcript._widgets.items() if w.has_class("-found")]


async def test_ctrl_f_finds_a_parked_block_steps_through_matches_and_esc_closes() -> None:
    async with running() as (app, pilot, loop):
        notes(loop, 300)
        await until(pilot, lambda: app.transcript.settled and app.transcript.hidden_count > 200)
        target = next(b for b in app.vm.blocks if isinstance(b, MarkerBlock) and b.text == "note 7")
        await pilot.press("ctrl+f")
        assert app.focused is not app.prompt_input and app.find_bar.display
        await type_text(pilot, "note 7")  # note 7, note 70..79: the newest match first
        newest = next(b for b in reversed(app.vm.blocks) if "note 7" in getattr(b, "text", ""))
        await until(pilot, lambda: found(app) == [newest.id])
        assert len(app.find_bar.matches) == 11
        for _ in range(10):
            await pilot.press("enter")  # up, to older matches
        await until(pilot, lambda: found(app) == [target.id])  # mounted from the parked part
        await pilot.press("shift+enter")
        await until(pilot, lambda: found(app) != [target.id] and len(found(app)) == 1)
        await pilot.press("escape")
        await until(pilot, lambda: not found(app))
        assert not app.find_bar.display and app.focused is app.prompt_input
        assert app.prompt_input.text == ""


async def test_slash_find_searches_tool_output_and_opens_the_row() -> None:
    async with running() as (app, pilot, loop):
        finished_call(loop, output="alpha\nneedle here\nomega")
        notes(loop, 5)
        await until(pilot, lambda: bool(app.transcript.query(ToolCallBlock)))
        await type_text(pilot, "/find needle")
        await pilot.press("enter")
        call = next(b for b in app.vm.blocks if isinstance(b, ToolBlock))
        await until(pilot, lambda: found(app) == [call.id])
        assert row(app).expanded
        assert app.find_bar.text == "needle"


async def test_a_search_with_no_match_says_so() -> None:
    async with running() as (app, pilot, loop):
        notes(loop, 3)
        await pilot.press("ctrl+f")
        await type_text(pilot, "absent")
        await pilot.pause()
        assert app.find_bar.matches == [] and not found(app)
        assert "no match" in str(app.find_bar.query_one(".count").render())


async def test_esc_closes_the_search_before_it_would_cancel_a_running_turn() -> None:
    async with running() as (app, pilot, loop):
        loop.emit(
            ev.TurnStarted(turn_id=1, prompt_ids=("p1",), texts=("first",)),
            ev.StepStarted(turn_id=1, step=1),
        )
        await until(pilot, lambda: app.vm.busy)
        await pilot.press("ctrl+f")
        await pilot.press("escape")
        assert not app.find_bar.display
        assert not any(name == "cancel" for name, _ in loop.calls)
        await pilot.press("escape")  # now it cancels, as always
        await until(pilot, lambda: any(name == "cancel" for name, _ in loop.calls))


# ---------------------------------------------------------------- commands are followed (item 14)


async def test_a_command_run_while_scrolled_up_shows_its_answer_at_the_end() -> None:
    async with running(size=(100, 20)) as (app, pilot, loop):
        notes(loop, 40)
        transcript = app.transcript
        await until(pilot, lambda: transcript.settled and transcript.max_scroll_y > 0)
        await pilot.press("pageup", "pageup")
        await until(pilot, lambda: not transcript.following)
        await type_text(pilot, "/help")
        await pilot.press("enter")
        await until(
            pilot,
            lambda: (
                transcript.following
                and transcript.scroll_y == transcript.max_scroll_y
                and "Ctrl+O" in getattr(app.vm.blocks[-1], "text", "")
            ),
        )


# ---------------------------------------------------------------- `!command` rows (item 12)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def bang_block(app: TuiAgentApp) -> ToolBlock | None:
    return next((b for b in app.vm.blocks if isinstance(b, ToolBlock) and b.name == "!"), None)


async def test_a_failing_bang_command_shows_failure_with_its_exit_code(workspace: Path) -> None:
    async with app_on([], workspace) as (app, pilot, _loop):
        await send(pilot, "!echo oops; exit 3")
        await until(pilot, lambda: (b := bang_block(app)) is not None and b.state != "running")
        block = bang_block(app)
        assert block is not None and block.state == "failed"
        await until(pilot, lambda: "exit 3" in str(row(app)._header.render()))
        header = str(row(app)._header.render())
        assert header.startswith("✗ !") and "✓" not in header


async def test_bang_output_shows_open_with_its_last_lines(workspace: Path) -> None:
    async with app_on([], workspace) as (app, pilot, _loop):
        await send(pilot, "!seq 1 100")
        await until(pilot, lambda: (b := bang_block(app)) is not None and b.state == "done")
        await until(pilot, lambda: "100" in str(row(app)._body.render()))
        body = str(row(app)._body.render())
        assert row(app).expanded and "earlier lines" in body and "\n1\n" not in body


async def test_a_bang_line_is_kept_in_the_prompt_history(workspace: Path) -> None:
    async with app_on([], workspace) as (app, pilot, _loop):
        await send(pilot, "!echo kept")
        await until(pilot, lambda: (b := bang_block(app)) is not None and b.state == "done")
        await pilot.press("up")
        assert app.prompt_input.text == "!echo kept"


# ---------------------------------------------------------------- the look


def test_a_found_block_is_marked_and_a_failed_bang_row_shows_its_exit_code(
    snap_compare: Any,
) -> None:
    app, loop, _clock = make_app()

    async def run_before(pilot: Pilot[None]) -> None:
        notes(loop, 3)
        block = app.vm.add_user_command("make test")
        app.vm.user_command_output(
            block, "collected 3 items\nFAILED test_a\nExit code: 2", state="failed", exit_code=2
        )
        finished_call(loop, output="alpha\nneedle here\nomega")
        await until(pilot, lambda: len(app.transcript.query(ToolCallBlock)) == 2)
        await pilot.press("ctrl+f")
        await type_text(pilot, "note 1")
        await until(pilot, lambda: len(found(app)) == 1)
        await settle(app, pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)
