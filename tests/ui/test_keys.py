"""Every key of the app, against a fake loop that records which loop call each key made."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import pytest
from textual import events
from textual.pilot import Pilot

from tests.ui.fake_loop import INFO, FakeLoop
from tests.ui.real_loop import MAX_FRAMES, until
from tui_agent.loop import events as ev
from tui_agent.loop.api import PermissionRule
from tui_agent.loop.snapshot import QueuedPrompt
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.hooks import SessionHooks, SessionSummary
from tui_agent.ui.inspector import MachineInspector
from tui_agent.ui.sessions_screen import SessionPicker
from tui_agent.ui.view_model import MarkerBlock, UserBlock
from tui_agent.ui.widgets.approval_bar import QUIET_S
from tui_agent.ui.widgets.blocks import AssistantText
from tui_agent.ui.widgets.markdown_view import split_blocks
from tui_agent.ui.widgets.transcript import MAX_MOUNTED


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@asynccontextmanager
async def running(
    loop: FakeLoop | None = None, size: tuple[int, int] = (120, 36), clock: Clock | None = None
) -> AsyncIterator[tuple[TuiAgentApp, Pilot[None], FakeLoop]]:
    loop = loop or FakeLoop()
    app = TuiAgentApp(loop, clock=clock or Clock())
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        yield app, pilot, loop


async def type_text(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*["space" if c == " " else c for c in text])


def turn_running(loop: FakeLoop) -> None:
    loop.emit(
        ev.TurnStarted(turn_id=1, prompt_ids=("p1",), texts=("first",)),
        ev.StepStarted(turn_id=1, step=1),
    )


async def test_enter_when_idle_submits_and_clears_the_input() -> None:
    async with running() as (app, pilot, loop):
        await type_text(pilot, "hi there")
        await pilot.press("enter")
        await pilot.pause()
        assert loop.calls == [("submit", ("hi there", False))]
        assert app.prompt_input.text == ""


async def test_enter_while_a_turn_runs_hands_the_text_to_the_loop_to_queue() -> None:
    async with running() as (_app, pilot, loop):
        turn_running(loop)
        await type_text(pilot, "next")
        await pilot.press("enter")
        await pilot.pause()
        assert loop.calls == [("submit", ("next", False))]


async def test_ctrl_s_while_a_turn_runs_steers() -> None:
    async with running() as (_app, pilot, loop):
        turn_running(loop)
        await type_text(pilot, "use -x")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert loop.calls == [("submit", ("use -x", True))]


async def test_ctrl_s_is_greyed_with_an_empty_input() -> None:
    async with running() as (app, pilot, _loop):
        assert app.check_action("steer", ()) is None
        await type_text(pilot, "x")
        assert app.check_action("steer", ()) is True


async def test_escape_cancels_the_running_turn_and_a_second_escape_forces_it() -> None:
    async with running() as (_app, pilot, loop):
        turn_running(loop)
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        loop.emit(ev.TurnAborting(turn_id=1, reason="user_cancelled"))
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert loop.calls == [("cancel", (None, False)), ("cancel", (None, True))]


async def test_escape_when_idle_clears_the_input_and_cancels_nothing() -> None:
    async with running() as (app, pilot, loop):
        await type_text(pilot, "draft")
        await pilot.press("escape")
        await pilot.pause()
        assert app.prompt_input.text == ""
        assert loop.calls == []


@pytest.mark.parametrize("clear_key", ["escape", "ctrl+c"])
async def test_ctrl_z_brings_back_a_draft_cleared_on_the_idle_prompt(clear_key: str) -> None:
    async with running() as (app, pilot, _loop):
        await type_text(pilot, "a long careful draft")
        await pilot.press(clear_key)
        await until(pilot, lambda: app.prompt_input.text == "")
        await pilot.press("ctrl+z")
        await until(pilot, lambda: app.prompt_input.text == "a long careful draft")


@pytest.mark.parametrize("clear_key", ["escape", "ctrl+c"])
async def test_up_brings_back_the_cleared_draft_before_earlier_prompts(clear_key: str) -> None:
    async with running() as (app, pilot, loop):
        await type_text(pilot, "sent before")
        await pilot.press("enter")
        await until(pilot, lambda: ("submit", ("sent before", False)) in loop.calls)
        await type_text(pilot, "the draft")
        await pilot.press(clear_key)
        await until(pilot, lambda: app.prompt_input.text == "")
        await pilot.press("up")
        assert app.prompt_input.text == "the draft"
        await pilot.press("up")
        assert app.prompt_input.text == "sent before"
        await pilot.press("down")
        assert app.prompt_input.text == "the draft"


async def test_a_cleared_draft_keeps_its_paste_chips_and_their_text() -> None:
    pasted = "\n".join(f"row {n}" for n in range(20))
    async with running() as (app, pilot, loop):
        app.post_message(events.Paste(pasted))
        await until(pilot, lambda: app.prompt_input.text == "[pasted #1: 20 lines]")
        await pilot.press("escape")
        await until(pilot, lambda: app.prompt_input.text == "")
        await type_text(pilot, "other")
        await pilot.press("enter")  # a prompt sent meanwhile does not take the pasted text
        await until(pilot, lambda: ("submit", ("other", False)) in loop.calls)
        await pilot.press("up")  # the cleared draft stays the first thing Up brings back
        assert app.prompt_input.text == "[pasted #1: 20 lines]"
        await pilot.press("enter")
        await until(pilot, lambda: ("submit", (pasted, False)) in loop.calls)


async def test_ctrl_c_cancels_a_running_turn() -> None:
    async with running() as (app, pilot, loop):
        turn_running(loop)
        await pilot.pause()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert loop.calls == [("cancel", (None, False))]
        assert app.is_running


async def test_ctrl_c_when_idle_clears_and_twice_within_two_seconds_quits() -> None:
    clock = Clock()
    async with running(clock=clock) as (app, pilot, loop):
        await type_text(pilot, "draft")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.prompt_input.text == ""
        assert not loop.closed
        clock.now += 1.5
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert loop.closed


async def test_ctrl_c_presses_further_apart_than_two_seconds_do_not_quit() -> None:
    clock = Clock()
    async with running(clock=clock) as (_app, pilot, loop):
        await pilot.press("ctrl+c")
        clock.now += 2.5
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not loop.closed


async def test_ctrl_q_cancels_the_turn_closes_the_loop_and_quits() -> None:
    async with running() as (_app, pilot, loop):
        turn_running(loop)
        await pilot.pause()
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert ("cancel", (None, True)) in loop.calls
        assert loop.calls[-1] == ("close", None)


async def test_shift_enter_ctrl_j_and_alt_enter_insert_newlines() -> None:
    async with running() as (app, pilot, loop):
        await pilot.press("a", "shift+enter", "b", "ctrl+j", "c", "alt+enter", "d")
        assert app.prompt_input.text == "a\nb\nc\nd"
        assert loop.calls == []


async def test_up_and_down_on_an_empty_input_walk_the_prompt_history() -> None:
    async with running() as (app, pilot, _loop):
        for text in ("one", "two"):
            await type_text(pilot, text)
            await pilot.press("enter")
        await pilot.press("up")
        assert app.prompt_input.text == "two"
        await pilot.press("up")
        assert app.prompt_input.text == "one"
        await pilot.press("down")
        assert app.prompt_input.text == "two"
        await pilot.press("down")
        assert app.prompt_input.text == ""


async def test_up_in_a_draft_moves_the_cursor_instead_of_recalling_history() -> None:
    async with running() as (app, pilot, _loop):
        await type_text(pilot, "one")
        await pilot.press("enter")
        await type_text(pilot, "draft")
        await pilot.press("up")
        assert app.prompt_input.text == "draft"


def ask(loop: FakeLoop, n: int = 1, **fields: Any) -> None:
    shell = {
        "name": "shell",
        "summary": "rm -rf build",
        "rule": "shell(rm:*)",
        "rules": ("shell(rm:*)",),
    }
    request = {**shell, "preview": "rm -rf build", **fields}
    loop.emit(ev.ApprovalRequested(request_id=f"r{n}", call_id=f"c{n}", **request))


async def shown(pilot: Pilot[None]) -> None:
    """Let the approval box appear, then let the time pass after which keys answer it."""
    app = pilot.app
    assert isinstance(app, TuiAgentApp) and isinstance(app.clock, Clock)
    await until(pilot, lambda: app.approval_bar.display)
    app.clock.now += QUIET_S


async def test_approval_takes_the_keyboard_when_nobody_types_and_y_allows_once() -> None:
    async with running() as (app, pilot, loop):
        turn_running(loop)
        ask(loop)
        await shown(pilot)
        # The empty draft gives its rows to the box; a draft with words in it stays (below).
        assert app.approval_bar.display and not app.prompt_input.display
        assert app.focused is app.approval_bar
        await pilot.press("y")
        await pilot.pause()
        assert loop.calls == [("answer_approval", ("r1", "once", None))]


@pytest.mark.parametrize(
    ("keys", "keep"), [(("a", "enter"), "session"), (("2", "2"), "project"), (("2", "3"), "user")]
)
async def test_always_asks_where_to_keep_the_rule(keys: tuple[str, ...], keep: str) -> None:
    async with running() as (app, pilot, loop):
        ask(loop)
        await shown(pilot)
        await pilot.press(keys[0])
        await pilot.pause()
        assert app.approval_bar.choosing_scope and loop.calls == []
        await pilot.press(keys[1])
        await pilot.pause()
        assert loop.calls == [("answer_approval", ("r1", "always", None))]
        assert loop.answer_options == [(keep, None)]


async def test_the_menu_answers_with_arrows_and_enter() -> None:
    async with running() as (_app, pilot, loop):
        ask(loop)
        await shown(pilot)
        await pilot.press("down", "down", "up", "enter", "enter")  # 2: always, then this session
        await pilot.pause()
        assert loop.calls == [("answer_approval", ("r1", "always", None))]


async def test_a_call_no_rule_can_allow_offers_no_always() -> None:
    async with running() as (app, pilot, loop):
        ask(loop, rule="", rules=())
        await shown(pilot)
        assert [c.decision for c in app.approval_bar.menu] == ["once", "deny"]
        await pilot.press("a")  # not an answer here: it goes to the draft
        await pilot.pause()
        assert loop.calls == [] and app.prompt_input.text == "a"


async def test_typing_while_the_box_is_up_never_answers_and_nothing_is_lost() -> None:
    """Once, "add a regression test" took the `a` as always, "next" the `n` as no."""
    async with running() as (app, pilot, loop):
        turn_running(loop)
        await type_text(pilot, "fix ")  # the person is typing in the draft when the box appears
        ask(loop)
        await until(pilot, lambda: app.approval_bar.display)
        assert app.focused is app.prompt_input  # the box does not take the keyboard mid-word
        assert app.prompt_input.display
        sentence = "add a regression test, next yes no 1 2 3"
        await type_text(pilot, sentence)
        await pilot.pause()
        assert loop.calls == [] and not app.approval_bar.asking_reason
        assert app.prompt_input.text == "fix " + sentence
        await pilot.press("tab")  # to the menu
        assert app.focused is app.approval_bar
        await pilot.press("1")
        await pilot.pause()
        assert loop.calls == [("answer_approval", ("r1", "once", None))]
        assert app.prompt_input.text == "fix " + sentence


@pytest.mark.parametrize("sentence", ["add a regression test", "next step", "no wait"])
async def test_a_word_starting_with_a_or_n_at_an_idle_box_goes_to_the_draft(
    sentence: str,
) -> None:
    async with running() as (app, pilot, loop):
        ask(loop)
        await shown(pilot)
        assert app.focused is app.approval_bar
        await type_text(pilot, sentence)  # `a`/`n` opened a step; the next key closed it
        await pilot.pause()
        assert loop.calls == [] and app.prompt_input.text == sentence
        assert not app.approval_bar.asking_reason and not app.approval_bar.choosing_scope


async def test_letters_typed_at_the_box_while_typing_go_to_the_draft() -> None:
    async with running() as (app, pilot, loop):
        ask(loop)
        await shown(pilot)
        assert app.focused is app.approval_bar
        await type_text(pilot, "hand a note")  # h is no answer: from then on it is typing
        await pilot.pause()
        assert loop.calls == [] and app.prompt_input.text == "hand a note"
        assert app.focused is app.prompt_input


async def test_a_letter_does_not_answer_once_the_draft_changed_since_the_box_appeared() -> None:
    async with running() as (app, pilot, loop):
        ask(loop)
        await shown(pilot)
        app.prompt_input.insert("x")  # e.g. a paste while the box was up
        app.approval_bar.focus()
        app.clock.now += QUIET_S  # type: ignore[attr-defined]
        await pilot.press("y")
        await pilot.pause()
        assert loop.calls == [] and app.prompt_input.text == "xy"


async def test_approval_n_denies_with_the_reason_typed() -> None:
    async with running() as (app, pilot, loop):
        ask(loop)
        await shown(pilot)
        await pilot.press("n")
        await pilot.pause()
        assert app.approval_bar.asking_reason
        app.clock.now += QUIET_S  # type: ignore[attr-defined]  # read the question, then type
        await type_text(pilot, "use trash")
        await pilot.press("enter")
        await pilot.pause()
        assert loop.calls == [("answer_approval", ("r1", "deny", "use trash"))]


async def test_the_next_approval_shows_after_the_first_is_resolved_then_the_input_returns() -> None:
    async with running() as (app, pilot, loop):
        ask(loop, 1)
        ask(loop, 2)
        await pilot.pause()
        assert app.approval_bar.request is not None and app.approval_bar.waiting == 1
        loop.emit(ev.ApprovalResolved(request_id="r1", call_id="c1", decision="once"))
        await pilot.pause()
        assert app.approval_bar.request.request_id == "r2"
        loop.emit(ev.ApprovalResolved(request_id="r2", call_id="c2", decision="once"))
        await pilot.pause()
        assert app.prompt_input.display and app.focused is app.prompt_input


def ask_plan(loop: FakeLoop, n: int, plan: str) -> None:
    """The model's plan number `n`, put to the person (`exit_plan_mode`)."""
    ask(
        loop,
        n,
        name="exit_plan_mode",
        kind="plan",
        summary="the plan",
        rule="",
        rules=(),
        preview=plan,
    )


async def test_plan_approval_accepts_in_the_chosen_mode_or_keeps_planning() -> None:
    async with running() as (app, pilot, loop):
        ask_plan(loop, 1, "# Plan\n1. edit a.py")
        await shown(pilot)
        assert "Accept this plan?" in str(app.approval_bar._question.render())
        await pilot.press("2")
        await pilot.pause()
        assert loop.calls == [("answer_approval", ("r1", "once", None))]
        assert loop.answer_options == [("session", "ask")]
        loop.emit(ev.ApprovalResolved(request_id="r1", call_id="c1", decision="once"))
        ask_plan(loop, 2, "# Plan v2")
        await shown(pilot)
        await pilot.press("4")
        await type_text(pilot, "smaller steps")
        await pilot.press("enter")
        await pilot.pause()
        assert loop.calls[-1] == ("answer_approval", ("r2", "deny", "smaller steps"))


async def test_permissions_lists_the_rules_and_removes_one() -> None:
    async with running() as (app, pilot, loop):
        loop.rules = (
            PermissionRule("allow", "Bash(npm test:*)", "config.toml", True),
            PermissionRule("allow", "Bash(make:*)", ".claude/settings.json", False),
            PermissionRule("deny", "Read(./.env)", ".tui-agent/settings.json", True),
        )
        app.run_slash("permissions")
        await pilot.pause()
        listing = app.vm.blocks[-1].text  # type: ignore[attr-defined]
        assert "1. allow Bash(npm test:*)   config.toml" in listing
        assert "Bash(make:*)   .claude/settings.json  (not trusted yet" in listing
        app.run_slash("permissions", "remove 3")
        await pilot.pause()
        assert ("remove_permission_rule", "Read(./.env)") in loop.calls
        assert "removed deny Read(./.env)" in app.vm.blocks[-1].text  # type: ignore[attr-defined]


async def test_delete_in_the_tools_pane_cancels_just_the_selected_call() -> None:
    async with running() as (_app, pilot, loop):
        turn_running(loop)
        for call_id in ("c1", "c2"):
            loop.emit(
                ev.ToolStarted(id=call_id, name="shell", arguments='{"command": "sleep 9"}'),
                ev.ToolStateChanged(id=call_id, name="shell", state="running"),
            )
        await pilot.pause()
        await pilot.press("ctrl+t", "down", "delete")
        await pilot.pause()
        assert loop.calls == [("cancel_tool", "c2")]


def queue_two(loop: FakeLoop, *, waiting: bool = False) -> None:
    """Two prompts shown queued; `waiting`: the loop's queue still holds them too (otherwise
    they entered the turn meanwhile)."""
    loop.emit(
        ev.PromptQueued(prompt_id="p2", text="second"),
        ev.PromptQueued(prompt_id="p3", text="third"),
    )
    if waiting:
        loop.snap = replace(
            loop.snap, queue=(QueuedPrompt("p2", "second"), QueuedPrompt("p3", "third"))
        )


async def test_queue_enter_holds_the_prompt_and_enter_queues_the_edit() -> None:
    async with running() as (app, pilot, loop):
        turn_running(loop)
        queue_two(loop, waiting=True)
        await pilot.pause()
        await pilot.press("ctrl+n", "enter")
        await until(pilot, lambda: app.prompt_input.text == "second")
        assert app.focused is app.prompt_input
        await pilot.press("!", "enter")
        await until(pilot, lambda: len(loop.calls) == 2)
        assert loop.calls == [("cancel", ("p2", False)), ("submit", ("second!", False))]
        assert app.prompt_input.text == ""


async def test_an_edit_of_a_prompt_that_already_entered_the_turn_is_sent_as_a_new_one() -> None:
    async with running() as (app, pilot, loop):
        turn_running(loop)
        queue_two(loop)  # shown in the pane, but the loop's queue has drained meanwhile
        await pilot.pause()
        await pilot.press("ctrl+n", "enter")
        await until(pilot, lambda: "already gone into the turn" in markers(app))
        await pilot.press("!", "enter")
        await until(pilot, lambda: len(loop.calls) == 1)
        assert loop.calls == [("submit", ("second!", False))]  # the turn was not cancelled


async def test_queue_delete_removes_the_selected_prompt() -> None:
    async with running() as (_app, pilot, loop):
        turn_running(loop)
        queue_two(loop)
        await pilot.pause()
        await pilot.press("ctrl+n", "down", "delete")
        await pilot.pause()
        assert loop.calls == [("cancel", ("p3", False))]


async def test_queue_ctrl_s_promotes_the_selected_prompt_to_a_steer() -> None:
    async with running() as (_app, pilot, loop):
        turn_running(loop)
        queue_two(loop)
        await pilot.pause()
        await pilot.press("ctrl+n", "ctrl+s")
        await pilot.pause()
        assert loop.calls == [("steer", ["p2"])]


async def test_queue_shift_down_moves_the_selected_prompt_later() -> None:
    async with running() as (app, pilot, loop):
        turn_running(loop)
        queue_two(loop)
        await pilot.pause()
        await pilot.press("ctrl+n")
        assert app.queue_pane.check_action("move", (-1,)) is None  # already first: greyed
        await pilot.press("shift+down")
        await pilot.pause()
        assert loop.calls == [("move_queued", ("p2", 1))]


async def test_slash_completion_tab_completes_and_enter_runs_help() -> None:
    async with running() as (app, pilot, loop):
        await pilot.press("slash", "h", "e")
        await pilot.pause()
        assert app.completion.display
        await pilot.press("tab")
        assert app.prompt_input.text == "/help"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.vm.blocks[-1], MarkerBlock)
        assert "Ctrl+S" in app.vm.blocks[-1].text
        assert loop.calls == []


async def test_slash_approval_sets_the_mode_on_the_loop() -> None:
    async with running() as (app, pilot, loop):
        await type_text(pilot, "/approval yolo")
        await pilot.press("enter")
        await pilot.pause()
        assert loop.calls == [("set_approval_mode", "yolo")]
        assert app.vm.status.approval_mode == "yolo"


async def test_slash_compact_asks_the_loop_to_compact() -> None:
    async with running() as (_app, pilot, loop):
        await type_text(pilot, "/compact")
        await pilot.press("enter")
        await pilot.pause()
        assert loop.calls == [("compact", None)]


async def test_palette_offers_the_slash_commands() -> None:
    async with running() as (app, _pilot, _loop):
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {
            "/help",
            "/new",
            "/sessions",
            "/resume",
            "/compact",
            "/model",
            "/approval",
            "/inspect",
            "/quit",
        } <= titles


async def test_f2_opens_the_live_inspector_and_it_follows_transitions() -> None:
    async with running() as (app, pilot, loop):
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, MachineInspector)
        loop.emit(
            ev.MachineTransition(
                machine="agent", machine_id="agent", event="submit", source="idle", target="running"
            )
        )
        screen = app.screen
        assert isinstance(screen, MachineInspector)
        await until(pilot, lambda: "running" in screen.states_text.plain)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, MachineInspector)


async def test_narrow_terminal_folds_the_side_column_and_ctrl_t_ctrl_n_show_it() -> None:
    async with running(size=(60, 20)) as (app, pilot, _loop):
        assert not app.query_one("#side").display or app.query_one("#side").size.width == 0
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert app.tools_pane.size.width > 0 and app.focused is app.tools_pane
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert app.queue_pane.size.width > 0 and app.tools_pane.size.width == 0
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert app.focused is app.prompt_input


async def test_scrolling_up_stops_following_and_end_follows_again() -> None:
    async with running(size=(100, 20)) as (app, pilot, loop):
        turn_running(loop)
        loop.emit(*(ev.AssistantDelta(turn_id=1, step=1, text=f"line {n}\n\n") for n in range(60)))
        transcript = app.transcript
        await until(
            pilot,
            lambda: (
                transcript.settled
                and transcript.max_scroll_y > 0
                and transcript.scroll_y == transcript.max_scroll_y
            ),
        )
        assert transcript.following
        transcript.scroll_up()
        transcript.scroll_up()
        await pilot.pause()
        assert not transcript.following
        await pilot.press("end")
        await pilot.pause()
        assert transcript.following


async def test_long_sessions_prune_old_widgets_and_home_brings_them_back() -> None:
    async with running() as (app, pilot, loop):
        for n in range(MAX_MOUNTED + 10):
            loop.emit(ev.Notice(level="info", text=f"note {n}"))
        await pilot.pause()
        transcript = app.transcript
        assert len(transcript._widgets) <= MAX_MOUNTED
        hidden = transcript.hidden_count
        assert hidden > 0
        transcript.focus()
        await pilot.press("home")
        await pilot.pause()
        assert transcript.hidden_count < hidden


async def test_submitted_text_appears_when_the_loop_starts_the_turn() -> None:
    async with running() as (app, pilot, loop):
        turn_running(loop)
        await pilot.pause()
        assert isinstance(app.vm.blocks[-1], UserBlock)
        assert app.vm.agent_label() == "step 1"


@pytest.mark.parametrize("command", ["/new", "/clear"])
async def test_slash_new_swaps_in_the_new_loop_and_closes_the_old_one(command: str) -> None:
    old, new = FakeLoop(), FakeLoop(info=replace(INFO, session_id="s-new"))

    async def new_session() -> FakeLoop:
        return new

    app = TuiAgentApp(old, hooks=SessionHooks(new_session=new_session), clock=Clock())
    async with app.run_test(size=(120, 36)) as pilot:
        await type_text(pilot, command)
        await pilot.press("enter")
        await pilot.pause()
        assert old.closed and app.loop is new
        assert app.vm.status.session_id == "s-new"
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await pilot.pause()
        assert new.calls == [("submit", ("hello", False))]


@pytest.mark.parametrize("command", ["/new", "/model other"])
async def test_a_command_that_would_cancel_the_running_turn_asks_first(command: str) -> None:
    old, new = FakeLoop(), FakeLoop(info=replace(INFO, session_id="s-new"))

    async def reopen(*_: str) -> FakeLoop:
        return new

    clock = Clock()
    hooks = SessionHooks(new_session=reopen, switch_model=reopen)
    app = TuiAgentApp(old, hooks=hooks, clock=clock)
    async with app.run_test(size=(120, 36)) as pilot:
        turn_running(old)
        await until(pilot, lambda: app.vm.busy)
        await type_text(pilot, command)
        await pilot.press("enter")
        await until(pilot, lambda: "again to go ahead" in markers(app))
        assert app.loop is old and old.calls == [] and not old.closed
        clock.now += 5
        await type_text(pilot, command)
        await pilot.press("enter")
        await until(pilot, lambda: app.loop is new)
        assert old.closed


async def test_slash_compact_mid_turn_says_it_waits_for_the_turn() -> None:
    async with running() as (app, pilot, loop):
        turn_running(loop)
        await until(pilot, lambda: app.vm.busy)
        await type_text(pilot, "/compact")
        await pilot.press("enter")
        await until(pilot, lambda: "/compact waits until the turn has ended" in markers(app))
        assert ("compact", None) not in loop.calls


def markers(app: TuiAgentApp) -> str:
    return "\n".join(b.text for b in app.vm.blocks if isinstance(b, MarkerBlock))


async def test_slash_sessions_picks_a_session_and_resumes_it() -> None:
    old, resumed = FakeLoop(), FakeLoop(info=replace(INFO, session_id="s-old"))
    asked: list[str] = []

    async def list_sessions() -> list[SessionSummary]:
        return [SessionSummary("s-old", "fix the parser", "2026-11-28 10:00")]

    async def resume(session_id: str) -> FakeLoop:
        asked.append(session_id)
        return resumed

    hooks = SessionHooks(list_sessions=list_sessions, resume=resume)
    app = TuiAgentApp(old, hooks=hooks, clock=Clock())
    async with app.run_test(size=(120, 36)) as pilot:
        await type_text(pilot, "/sessions")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, SessionPicker)
        await pilot.press("enter")
        await pilot.pause()
        assert asked == ["s-old"] and app.loop is resumed and old.closed


async def test_commands_without_a_hook_say_they_are_not_available() -> None:
    async with running() as (app, pilot, loop):
        await type_text(pilot, "/new")
        await pilot.press("enter")
        await pilot.pause()
        last = app.vm.blocks[-1]
        assert isinstance(last, MarkerBlock) and "not available" in last.text
        assert loop.calls == []


async def test_a_long_answer_draws_each_settled_block_once() -> None:
    # A frame draws the block that can still change, never the whole answer again: so a frame
    # costs the same however long the answer grows.
    # ~215 pieces, 17 blocks: drawing every settled block again at each frame would be ~1,800
    # block draws, against the bound of 249 below (a frame per piece is what costs here).
    paragraph = "word " * 120 + "\n\n"
    fence = "```\n" + "code line\n\n" * 100 + "```\n\n"  # blank lines inside: one block
    text = paragraph * 8 + fence + paragraph * 8
    async with running() as (app, pilot, loop):
        turn_running(loop)
        for start in range(0, len(text), 50):
            loop.emit(ev.AssistantDelta(turn_id=1, step=1, text=text[start : start + 50]))
            await pilot.pause()  # a frame for (nearly) every piece
        # On a busy machine the events can still be queued here: wait for the answer's widget.
        await until(pilot, lambda: bool(app.transcript.query(AssistantText)))
        answer = app.transcript.query_one(AssistantText)
        await until(pilot, lambda: answer.drawn_chars == len(text))
        assert answer.blocks == split_blocks(text)  # as an answer drawn from its whole text
        assert fence in answer.blocks
        # Each block once, the growing one again at most once per piece, and all of them once
        # more when the scrollbar appeared (the width changed).
        pieces, blocks = len(text) // 50 + 1, len(answer.blocks)
        assert answer.blocks_drawn <= pieces + 2 * blocks
        drawn = answer.blocks_drawn
        app.transcript.scroll_home(animate=False)  # showing other lines draws nothing again
        await until(pilot, lambda: app.transcript.scroll_y == 0)
        await pilot.pause()
        assert answer.blocks_drawn == drawn


async def test_an_append_costs_one_layout_of_the_screen() -> None:
    # Textual asks for a second layout whenever a widget's virtual size changed, which for
    # the answer and the transcript only repeats the first: every stream frame paid twice.
    async with running() as (app, pilot, loop):
        turn_running(loop)
        loop.emit(ev.AssistantDelta(turn_id=1, step=1, text="intro\n\n" * 40))
        await until(pilot, lambda: bool(app.transcript.query(AssistantText)))
        answer = app.transcript.query_one(AssistantText)
        await until(pilot, lambda: answer.drawn_chars == answer.length)
        screen = app.screen
        layouts: list[bool] = []
        original = screen._refresh_layout

        def counted(size: object = None, scroll: bool = False) -> None:
            layouts.append(scroll)
            original(size, scroll)  # type: ignore[arg-type]

        screen._refresh_layout = counted  # type: ignore[method-assign]
        quiet = 0  # the turn's first blocks may still be laid out: wait for 2 quiet frames
        for _ in range(MAX_FRAMES):
            layouts.clear()
            await pilot.pause()
            quiet = 0 if layouts else quiet + 1
            if quiet == 2:
                break
        loop.emit(ev.AssistantDelta(turn_id=1, step=1, text="two more\n\nparagraphs"))
        await until(pilot, lambda: answer.drawn_chars == answer.length)
        for _ in range(3):
            await pilot.pause()
        assert layouts == [False]
        assert app.transcript.scroll_y == app.transcript.max_scroll_y  # still at the tail


async def test_a_narrower_window_draws_the_answer_again_at_its_width() -> None:
    text = "## Title\n\n" + "word " * 60 + "\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    async with running(size=(100, 30)) as (app, pilot, loop):
        turn_running(loop)
        loop.emit(ev.AssistantDelta(turn_id=1, step=1, text=text))
        await until(pilot, lambda: bool(app.transcript.query(AssistantText)))
        answer = app.transcript.query_one(AssistantText)
        await until(pilot, lambda: answer.drawn_chars == len(text))
        tall = answer.size.height
        await pilot.resize_terminal(60, 30)
        await until(pilot, lambda: answer.size.width < 60 and answer.size.height > tall)
        lines = [answer.render_line(y) for y in range(answer.size.height)]
        assert all(line.cell_length == answer.size.width for line in lines)
        assert "word" in lines[2].text


async def test_page_up_in_the_prompt_scrolls_the_transcript_back() -> None:
    async with running(size=(100, 20)) as (app, pilot, loop):
        turn_running(loop)
        loop.emit(*(ev.AssistantDelta(turn_id=1, step=1, text=f"line {n}\n\n") for n in range(60)))
        await until(pilot, lambda: app.transcript.scroll_y > 0)  # drawn, and at the bottom
        bottom = app.transcript.scroll_y
        await pilot.press("pageup")
        await pilot.pause()
        assert app.transcript.scroll_y < bottom and app.focused is app.prompt_input
        assert not app.transcript.following
