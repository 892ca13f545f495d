"""Everyday keys and flows do what a person expects and nothing else: copy, typing, panes,
newlines, commands, approvals, scrolling, the welcome block, the inspector, tool rows, dialogs'
keys and notices while the terminal is unfocused. Fake loop, fixed clock; raw terminal bytes go
through Textual's own parser."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace

from textual._xterm_parser import XTermParser
from textual.geometry import Offset
from textual.pilot import Pilot
from textual.selection import Selection

from tests.ui.fake_loop import INFO, FakeLoop
from tests.ui.real_loop import until
from tests.ui.test_keys import Clock, ask, queue_two, running, shown, turn_running, type_text
from tui_agent.loop import events as ev
from tui_agent.loop.snapshot import QueuedPrompt
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.hooks import SessionHooks
from tui_agent.ui.inspector import MachineInspector
from tui_agent.ui.view_model import MarkerBlock
from tui_agent.ui.widgets.approval_bar import QUIET_S
from tui_agent.ui.widgets.blocks import AssistantText, UserPrompt


async def feed(pilot: Pilot[None], raw: str) -> None:
    """Send bytes as a terminal would: parsed by Textual's parser, posted to the app."""
    parser = XTermParser()
    for event in [*parser.feed(raw), *parser.feed("")]:
        pilot.app.post_message(event)
    await pilot.pause()


def last_marker(app: TuiAgentApp) -> MarkerBlock:
    block = app.vm.blocks[-1]
    assert isinstance(block, MarkerBlock)
    return block


# ---------------------------------------------------------------- copy


async def select_first_prompt(app: TuiAgentApp, pilot: Pilot[None]) -> None:
    app.vm.apply(ev.TurnStarted(turn_id=1, prompt_ids=("p1",), texts=("fix the parser",)))
    await pilot.pause()
    widget = app.transcript.query_one(UserPrompt)
    app.screen.selections = {widget: Selection(None, None)}


async def test_ctrl_c_with_a_selection_copies_it_and_does_nothing_else() -> None:
    async with running() as (app, pilot, loop):
        await type_text(pilot, "draft")
        await select_first_prompt(app, pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard.endswith("fix the parser")
        assert app.prompt_input.text == "draft"  # not cleared
        assert loop.calls == [] and app.keys.last_ctrl_c is None  # no cancel, no quit window


async def test_ctrl_c_with_a_selection_during_a_turn_copies_and_does_not_cancel() -> None:
    async with running() as (app, pilot, loop):
        await select_first_prompt(app, pilot)
        turn_running(loop)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard.endswith("fix the parser") and loop.calls == []


async def test_ctrl_c_copies_a_selection_in_an_answer() -> None:
    async with running() as (app, pilot, loop):
        turn_running(loop)
        loop.emit(ev.AssistantDelta(turn_id=1, step=1, text="## Plan\n\n- read `main.py`\n"))
        await until(pilot, lambda: bool(app.transcript.query(AssistantText)))
        answer = app.transcript.query_one(AssistantText)
        await until(pilot, lambda: answer.drawn_chars > 0)
        app.screen.selections = {answer: Selection(Offset(3, 2), Offset(15, 2))}
        await pilot.pause()
        assert "read main.py" in answer.render_line(2).text  # still drawn while selected
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == "read main.py"


async def test_ctrl_shift_c_copies_a_selection_in_the_prompt_and_nothing_without_one() -> None:
    async with running() as (app, pilot, loop):
        await type_text(pilot, "abc")
        await pilot.press("ctrl+shift+c")
        assert app.clipboard == ""
        await pilot.press("shift+left", "shift+left")
        await pilot.press("ctrl+shift+c")
        assert app.clipboard == "bc" and app.prompt_input.text == "abc"
        assert loop.calls == []


async def test_slash_copy_copies_the_last_answer_and_copy_n_the_n_th_last() -> None:
    async with running() as (app, pilot, loop):
        turn_running(loop)
        for step, text in ((1, "first answer"), (2, "second answer")):
            loop.emit(ev.AssistantDelta(turn_id=1, step=step, text=text))
            loop.emit(ev.StepStarted(turn_id=1, step=step + 1))
        await pilot.pause()
        await type_text(pilot, "/copy")
        await pilot.press("enter")
        assert app.clipboard == "second answer"
        await type_text(pilot, "/copy 2")
        await pilot.press("enter")
        assert app.clipboard == "first answer"
        await type_text(pilot, "/copy 3")
        await pilot.press("enter")
        await pilot.pause()
        assert "no answer number 3" in last_marker(app).text
        assert loop.calls == []


# ---------------------------------------------------------------- panes never eat typing


async def test_typing_in_the_tools_pane_goes_to_the_prompt_and_cancels_nothing() -> None:
    async with running() as (app, pilot, loop):
        turn_running(loop)
        loop.emit(
            ev.ToolStarted(id="c1", name="shell", arguments='{"command": "sleep 9"}'),
            ev.ToolStateChanged(id="c1", name="shell", state="running"),
        )
        await pilot.pause()
        await pilot.press("ctrl+t")
        assert app.focused is app.tools_pane
        await pilot.press("f", "i", "x", "d", "e", "s")
        await pilot.pause()
        assert app.prompt_input.text == "fixdes" and app.focused is app.prompt_input
        assert loop.calls == []


async def test_typing_in_the_queue_pane_goes_to_the_prompt_in_a_narrow_terminal_too() -> None:
    async with running(size=(60, 20)) as (app, pilot, loop):
        turn_running(loop)
        queue_two(loop)
        await pilot.pause()
        await pilot.press("ctrl+n")
        assert app.focused is app.queue_pane
        await type_text(pilot, "e d s")
        await pilot.pause()
        assert app.prompt_input.text == "e d s" and loop.calls == []
        assert not app.screen.has_class("-show-queue")  # the pane folded away again


async def test_moving_a_queued_prompt_keeps_it_selected() -> None:
    loop = FakeLoop()
    async with running(loop) as (app, pilot, _):
        turn_running(loop)
        queue_two(loop)
        await pilot.pause()
        await pilot.press("ctrl+n")
        assert app.queue_pane.selected_row is not None
        assert app.queue_pane.selected_row.prompt_id == "p2"
        # The loop confirms the move: its snapshot has the new order.
        loop.snap = replace(loop.snap, queue=(_queued("p3", "third"), _queued("p2", "second")))
        await pilot.press("shift+down")
        await until(pilot, lambda: [r.prompt_id for r in app.vm.queue] == ["p3", "p2"])
        assert app.queue_pane.selected_row.prompt_id == "p2"


def _queued(prompt_id: str, text: str) -> object:

    return QueuedPrompt(prompt_id, text)


async def test_the_queue_pane_says_queued_prompts_enter_the_next_turn_together() -> None:
    async with running() as (app, pilot, loop):
        turn_running(loop)
        queue_two(loop)
        await until(
            pilot, lambda: app.queue_pane.border_subtitle == "all enter the next turn, in order"
        )


# ---------------------------------------------------------------- typed-ahead


async def test_text_typed_right_after_enter_belongs_to_the_next_prompt() -> None:
    async with running() as (app, pilot, loop):
        # One burst: nothing runs between the keys but the app's own handling.
        await pilot.press(*"first", "enter", *"typed")
        await pilot.pause()
        assert loop.calls == [("submit", ("first", False))]
        assert app.prompt_input.text == "typed"


async def test_text_typed_right_after_resume_is_kept() -> None:
    old, resumed = FakeLoop(), FakeLoop(info=replace(INFO, session_id="s-old"))

    async def resume(session_id: str) -> FakeLoop:
        return resumed

    app = TuiAgentApp(old, hooks=SessionHooks(resume=resume), clock=Clock())
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"/resume", "space", *"s-old", "enter", *"next")
        await pilot.pause()
        assert app.loop is resumed
        assert app.prompt_input.text == "next"


async def test_an_edited_queued_prompt_keeps_what_is_typed_after_enter() -> None:
    async with running() as (app, pilot, loop):
        turn_running(loop)
        queue_two(loop, waiting=True)
        await pilot.pause()
        await pilot.press("ctrl+n", "enter", "!", "enter", *"more")
        await until(pilot, lambda: len(loop.calls) == 2)
        assert loop.calls == [("cancel", ("p2", False)), ("submit", ("second!", False))]
        assert app.prompt_input.text == "more"


# ---------------------------------------------------------------- newlines


async def test_shift_enter_in_every_terminal_form_alt_enter_and_ctrl_j_insert_newlines() -> None:
    async with running() as (app, pilot, loop):
        await feed(pilot, "a\x1b[13;2u")  # kitty
        await feed(pilot, "b\x1b[27;2;13~")  # xterm modifyOtherKeys, tmux extended keys
        await feed(pilot, "c\x1b\r")  # Alt+Enter in a legacy terminal
        await feed(pilot, "d\x1b[27;3;13~")  # Alt+Enter with modifyOtherKeys
        await feed(pilot, "e\n")  # Ctrl+J
        await feed(pilot, "f")
        assert app.prompt_input.text == "a\nb\nc\nd\ne\nf"
        assert loop.calls == []
        await feed(pilot, "\r")
        assert loop.calls == [("submit", ("a\nb\nc\nd\ne\nf", False))]


# ---------------------------------------------------------------- slash commands


async def test_an_unknown_slash_word_is_refused_with_the_nearest_commands() -> None:
    async with running() as (app, pilot, loop):
        await type_text(pilot, "/hlep me")
        await pilot.press("enter")
        await pilot.pause()
        marker = last_marker(app)
        assert marker.kind == "warning" and "/hlep is not a command" in marker.text
        assert "/help" in marker.text
        assert loop.calls == []


async def test_a_path_at_the_start_is_a_prompt_not_a_command() -> None:
    async with running() as (_app, pilot, loop):
        await type_text(pilot, "/usr/lib is missing")
        await pilot.press("enter")
        await pilot.pause()
        assert loop.calls == [("submit", ("/usr/lib is missing", False))]


async def test_exit_is_quit() -> None:
    async with running() as (_app, pilot, loop):
        await type_text(pilot, "/exit")
        await pilot.press("enter")
        await pilot.pause()
        assert loop.closed


# ---------------------------------------------------------------- approvals


DIFF = "--- a/big.py\n+++ b/big.py\n@@ -1,40 +1,40 @@\n" + "".join(
    f"-old {n}\n+new {n}\n" for n in range(1, 41)
)


def ask_edit(loop: FakeLoop) -> None:
    ask(loop, name="edit_file", summary="big.py", rule="edit_file: big.py", preview=DIFF)


async def test_keys_typed_as_the_approval_appears_go_to_the_draft_not_the_answer() -> None:
    clock = Clock()
    async with running(clock=clock) as (app, pilot, loop):
        await pilot.press("n", "o")  # the person is typing when the box appears
        ask(loop)
        await until(pilot, lambda: app.approval_bar.display)
        await pilot.press("w")
        await pilot.pause()
        assert loop.calls == [] and not app.approval_bar.asking_reason
        assert app.prompt_input.text == "now" and app.focused is app.prompt_input
        clock.now += QUIET_S
        await pilot.press("tab", "y")  # the draft changed since the box appeared: y is text
        await pilot.pause()
        assert loop.calls == [] and app.prompt_input.text == "nowy"
        await pilot.press("tab", "1")
        await pilot.pause()
        assert loop.calls == [("answer_approval", ("r1", "once", None))]


async def test_the_whole_diff_is_in_the_preview_with_line_numbers_and_it_scrolls() -> None:
    async with running(size=(60, 20)) as (app, pilot, loop):
        ask_edit(loop)
        await shown(pilot)
        preview = app.approval_bar._scroll
        shown_text = str(app.approval_bar._preview.render())
        assert "+new 40" in shown_text and "more lines" not in shown_text
        assert "40    -old 40" in shown_text and "   40 +new 40" in shown_text
        await until(pilot, lambda: preview.max_scroll_y > 0)  # more lines than the box shows
        await pilot.press("pagedown")
        assert preview.scroll_y > 0
        assert app.status_bar.region.height == 1 and app.status_bar.region.y < 20


async def test_v_gives_the_diff_the_whole_screen_and_the_status_bar_stays() -> None:
    async with running(size=(60, 20)) as (app, pilot, loop):
        ask_edit(loop)
        await shown(pilot)
        small = app.approval_bar._scroll.size.height
        await pilot.press("v")
        await pilot.pause()
        assert app.approval_bar._scroll.size.height > small
        assert app.status_bar.region.height == 1
        await pilot.press("1")  # a number answers at once; `y` waits for a second without keys
        await pilot.pause()
        assert not app.screen.has_class("-approval-expanded")


async def test_shift_tab_cycles_the_approval_mode_and_the_status_bar_shows_it() -> None:
    async with running() as (app, pilot, loop):
        modes = ("auto-edit", "yolo", "plan", "ask")  # plan → ask → auto-edit → yolo → plan
        for mode in modes:
            await pilot.press("shift+tab")
            await pilot.pause()
            assert app.vm.status.approval_mode == mode
            assert mode in str(app.status_bar.render())
        calls = [c for c in loop.calls if c[0] == "set_approval_mode"]
        assert calls == [("set_approval_mode", mode) for mode in modes]


# ---------------------------------------------------------------- scrolling


async def test_repeated_page_up_keeps_going_and_home_end_work_from_the_prompt() -> None:
    async with running(size=(100, 20)) as (app, pilot, loop):
        turn_running(loop)
        loop.emit(*(ev.AssistantDelta(turn_id=1, step=1, text=f"line {n}\n\n") for n in range(80)))
        page = app.transcript.scrollable_content_region.height
        transcript = app.transcript
        await until(
            pilot,
            lambda: (
                transcript.settled and transcript.max_scroll_y > 4 * page and transcript.following
            ),
        )
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        bottom = app.transcript.scroll_y
        await feed(pilot, "\x1b[5~" * 3)  # three PageUps in one read, as a quick hand sends them
        assert app.transcript.scroll_y == bottom - 3 * page
        assert not app.transcript.following
        await pilot.press("home")
        await pilot.pause()
        assert app.transcript.scroll_y == 0 and app.focused is app.prompt_input
        await pilot.press("end")
        await until(
            pilot,
            lambda: (
                app.transcript.following and app.transcript.scroll_y == app.transcript.max_scroll_y
            ),
        )


async def test_home_in_a_draft_moves_the_cursor_first() -> None:
    async with running() as (app, pilot, _loop):
        await type_text(pilot, "draft")
        await pilot.press("home")
        assert app.prompt_input.cursor_location == (0, 0)


# ---------------------------------------------------------------- welcome, inspector, dialogs


async def test_a_real_provider_starts_with_a_welcome_block() -> None:
    info = replace(INFO, provider="openai", model="gpt-x", demo=False)
    async with running(FakeLoop(info=info)) as (app, _pilot, _loop):
        welcome = app.vm.blocks[0]
        assert isinstance(welcome, MarkerBlock) and welcome.kind == "welcome"
        assert INFO.workspace in welcome.text and "openai/gpt-x" in welcome.text
        assert "approval ask" in welcome.text and "Shift+Enter newline" in welcome.text


def transition(machine: str, machine_id: str, event: str, source: str, target: str) -> ev.LoopEvent:
    return ev.MachineTransition(
        machine=machine, machine_id=machine_id, event=event, source=source, target=target
    )


async def test_the_inspector_keeps_live_machines_and_the_last_finished_with_readable_events() -> (
    None
):
    async with running() as (app, pilot, loop):
        loop.emit(transition("agent", "agent", "done.invoke.gating.28a4c899", "gating", "running"))
        for n in range(10):
            loop.emit(transition("tool", f"call_{n}", "start", "", "preparing"))
            loop.emit(
                transition("tool", f"call_{n}", "done.invoke.x.ab12", "finishing", "succeeded")
            )
        loop.emit(transition("tool", "call_live", "", "preparing", "executing"))
        await pilot.press("f2")
        await pilot.pause()
        states = app.vm.machines.states
        assert states["agent"] == "running" and states["call_live"] == "executing"
        assert [k for k in states if k.startswith("call_") and k != "call_live"] == [
            f"call_{n}" for n in range(4, 10)
        ]
        inspector = app.screen
        assert isinstance(inspector, MachineInspector)
        shown = str(inspector._transitions.render())
        assert "─gating done→" in shown and "─(auto)→" in shown and "invoke" not in shown
        assert "tool call_live" in str(inspector.states_text)


async def test_tool_rows_show_their_index_and_the_arguments_that_tell_them_apart() -> None:
    async with running() as (app, pilot, loop):
        turn_running(loop)
        for call_id, args in (
            ("c1", '{"pattern": "TODO", "path": "src"}'),
            ("c2", '{"pattern": "TODO", "path": "tests"}'),
        ):
            loop.emit(ev.ToolStarted(id=call_id, name="grep", arguments=args))
        await until(pilot, lambda: app.tools_pane.option_count == 2)
        rows = [app.tools_pane.row_text(i) for i in range(2)]
        # A search shows its pattern first, then where it looks.
        assert "#1 grep TODO in src" in rows[0]
        assert "#2 grep TODO in tests" in rows[1]


async def test_dialogs_show_their_own_keys_in_their_footer() -> None:
    async with running() as (app, pilot, _loop):
        await pilot.press("f2")
        await pilot.pause()
        keys = {b.binding.action for b in app.screen.active_bindings.values() if b.enabled}
        assert "dismiss" in keys
        assert not {"toggle_tools", "toggle_queue", "cancel_turn", "escape_idle"} & keys
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, MachineInspector)


@asynccontextmanager
async def calling_back() -> AsyncIterator[tuple[TuiAgentApp, Pilot[None], FakeLoop, list[str]]]:
    """The app with `bell+desktop` call-backs; what it writes to the terminal (and its bells)."""
    loop = FakeLoop()
    app = TuiAgentApp(
        loop, hooks=SessionHooks(turn_end_notice=lambda: "bell+desktop"), clock=Clock()
    )
    async with app.run_test(size=(120, 36)) as pilot:
        written: list[str] = []
        assert app._driver is not None
        app._driver.write = written.append  # type: ignore[method-assign]
        app.bell = lambda: written.append("BELL")  # type: ignore[method-assign]
        yield app, pilot, loop, written


async def test_a_turn_that_ends_while_the_terminal_is_unfocused_rings_and_notifies() -> None:
    async with calling_back() as (app, pilot, loop, written):
        finished = ev.TurnFinished(
            turn_id=1, text="", result=ev.TurnResult(type="completed", steps=1)
        )
        turn_running(loop)
        loop.emit(finished)  # focused: nothing
        await pilot.pause()
        assert written == []
        app.app_focus = False
        turn_running(loop)
        loop.emit(finished)
        await pilot.pause()
        out = "".join(written)
        assert out.startswith("BELL")
        assert "\x1b]9;turn completed" in out and "\x1b]777;notify;tui-agent;turn completed" in out


async def test_an_approval_that_waits_while_the_terminal_is_unfocused_rings_and_notifies() -> None:
    async with calling_back() as (app, pilot, loop, written):
        turn_running(loop)
        ask(loop, 1)  # focused: the box is enough
        await until(pilot, lambda: app.approval_bar.display)
        assert written == []
        app.app_focus = False
        ask(loop, 2, summary="git push\x1b]0;x\x07")
        await until(pilot, lambda: len(app.vm.approvals) == 2)
        out = "".join(written)
        assert out.startswith("BELL")
        notice = "approval needed: shell git push]0;x"  # its control characters dropped
        assert f"\x1b]9;{notice}\x07" in out and f"\x1b]777;notify;tui-agent;{notice}\x07" in out


async def test_no_turn_end_notice_without_the_setting() -> None:
    async with running() as (app, pilot, loop):
        written: list[str] = []
        assert app._driver is not None
        app._driver.write = written.append  # type: ignore[method-assign]
        app.app_focus = False
        turn_running(loop)
        loop.emit(
            ev.TurnFinished(turn_id=1, text="", result=ev.TurnResult(type="completed", steps=1))
        )
        await pilot.pause()
        assert written == []


async def test_typing_in_a_pane_while_an_approval_waits_goes_to_the_draft_and_answers_nothing() -> (
    None
):
    clock = Clock()
    async with running(clock=clock) as (app, pilot, loop):
        turn_running(loop)
        loop.emit(ev.ToolStarted(id="c1", name="shell", arguments='{"command": "rm -rf build"}'))
        ask(loop)
        await until(pilot, lambda: app.approval_bar.display)
        clock.now += QUIET_S
        await pilot.press("ctrl+t")
        assert app.focused is app.tools_pane
        await pilot.press("y", "a", "n")
        await pilot.pause()
        assert loop.calls == [] and app.prompt_input.text == "yan"
        assert app.focused is app.prompt_input
        await pilot.press("tab", "1")
        await pilot.pause()
        assert loop.calls == [("answer_approval", ("r1", "once", None))]
