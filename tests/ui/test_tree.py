"""/fork, /tree and `f` in the /rewind list, on the real loop and the scripted model: a fork
keeps the branch it left, the tree switches back to it with its files, and a switch over an
outside edit says why and moves nothing."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Checkbox, Static, Tree

from tests.ui.real_loop import until
from tests.ui.scenes import make_app, settle
from tests.ui.test_flows import send
from tests.ui.test_rewind import app_in, prompts, two_turns
from tui_agent.context import (
    BranchSwitch,
    FileCheckpoint,
    Prompt,
    Record,
    StepEnd,
    TurnBegin,
    UsageAdded,
)
from tui_agent.loop.session_tree import SessionTree
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.rewind_screen import CONVERSATION, RestoreChoice, RewindPicker
from tui_agent.ui.tree_view import TreeDialog
from tui_agent.ui.view_model import MarkerBlock
from tui_agent.usage import PriceOverride, Pricer
from tui_agent.vocab import FinishReason, TokenUsage, user_message


def markers(app: TuiAgentApp) -> list[str]:
    return [block.text for block in app.vm.blocks if isinstance(block, MarkerBlock)]


async def test_fork_then_tree_switches_back_with_the_files(tmp_path: Path) -> None:
    async with app_in(tmp_path) as (app, pilot, workspace):
        await two_turns(app, pilot)  # a.txt: "first", then "second"
        await send(pilot, "/fork")
        await until(pilot, lambda: isinstance(app.screen, RewindPicker))
        await pilot.press("up", "enter")  # fork after "one"
        await until(pilot, lambda: isinstance(app.screen, RestoreChoice))
        await pilot.press("enter")  # and put the files back as they were then
        await until(pilot, lambda: prompts(app) == ["one"] and not app.vm.busy)
        assert (workspace / "a.txt").read_text() == "first\n"
        assert any(text.startswith("forked after: one") for text in markers(app))

        await send(pilot, "/tree")
        await until(pilot, lambda: isinstance(app.screen, TreeDialog))
        shown = app.screen.query_one(Tree)
        assert shown.cursor_node is not None and shown.cursor_node.data == 0  # current: "one"
        await pilot.press("down", "f", "enter")  # "two", with its files
        await until(pilot, lambda: isinstance(app.screen, RestoreChoice))
        assert app.screen.plan.files == ("a.txt",)
        await pilot.press("enter")  # yes, put them back
        await until(pilot, lambda: prompts(app) == ["one", "two"] and not app.vm.busy)
        assert (workspace / "a.txt").read_text() == "second\n"


async def test_f_in_the_rewind_list_forks_there_keeping_the_files(tmp_path: Path) -> None:
    async with app_in(tmp_path) as (app, pilot, workspace):
        await two_turns(app, pilot)
        await pilot.press("escape", "escape")
        await until(pilot, lambda: isinstance(app.screen, RewindPicker))
        await pilot.press("up", "f")
        await until(pilot, lambda: isinstance(app.screen, RestoreChoice))
        await pilot.press("down", "enter")  # keep the files as they are
        await until(pilot, lambda: prompts(app) == ["one"] and not app.vm.busy)
        assert (workspace / "a.txt").read_text() == "second\n"
        tree = await app.loop.session_tree()
        assert (tree.tip, tree.branches()) == (0, [0])  # "two" is still there, after "one"


async def test_a_switch_never_offers_to_overwrite_an_outside_edit(tmp_path: Path) -> None:
    async with app_in(tmp_path) as (app, pilot, workspace):
        await two_turns(app, pilot)
        (workspace / "a.txt").write_text("mine\n", encoding="utf-8")
        await send(pilot, "/tree")
        await until(pilot, lambda: isinstance(app.screen, TreeDialog))
        await pilot.press("up", "f")
        assert app.screen.query_one(Checkbox).value
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RestoreChoice))
        choice = app.screen
        assert [key for key, _ in choice.options] == [CONVERSATION]
        warning = str(choice.query_one(".warning", Static).render())
        assert "a.txt" in warning and "never overwrites" in warning
        await pilot.press("enter")  # the conversation only
        await until(pilot, lambda: prompts(app) == ["one"] and not app.vm.busy)
        assert (workspace / "a.txt").read_text() == "mine\n"


def test_the_tree_dialog_looks_as_reviewed(snap_compare: Any, monkeypatch: Any) -> None:
    """Three branches from a session of five prompts; the current turn is on branch 2."""
    monkeypatch.setattr(time, "localtime", time.gmtime)  # the same picture in every time zone
    records: list[Record] = []
    for number, (prompt, files, leave_to) in enumerate(
        [
            ("fix the failing test in parser.py", ("parser.py",), None),
            ("now add a regression test", ("tests/test_parser.py",), None),
            ("run the whole suite", (), 0),
            ("try a smaller change instead", ("parser.py",), None),
            ("explain the bug in one paragraph", (), None),
        ]
    ):
        records += [
            TurnBegin(turn_id=number, ts=1_780_000_000.0 + 300 * number),
            Prompt(prompt_id=f"p{number}", message=user_message(prompt)),
            *(FileCheckpoint(call_id="c", path=p, before=None, after="0" * 64) for p in files),
            StepEnd(uuid=f"s{number}", finish_reason=FinishReason.END_TURN),
            UsageAdded(usage=TokenUsage(input_other=20_000 * (number + 1), output=800)),
        ]
        if leave_to is not None:
            records.append(BranchSwitch(turn=leave_to))
    records.append(BranchSwitch(turn=3))
    flat = Pricer("m", provider="", override=PriceOverride(input=3.0, output=3.0))
    tree = SessionTree.of(records).price(lambda model: flat)
    app, _loop, _clock = make_app()

    async def run_before(pilot: Pilot[None]) -> None:
        app.push_screen(TreeDialog(tree))
        await until(pilot, lambda: isinstance(app.screen, TreeDialog))
        await settle(app, pilot)

    assert snap_compare(app, terminal_size=(120, 30), run_before=run_before)
