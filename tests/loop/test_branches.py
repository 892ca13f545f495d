"""The session tree on the real loop: a fork starts a branch and keeps the one it left, a switch
moves the conversation (and, when asked, the files) to any branch and back, a resumed session
opens on the branch it was on, and an outside edit refuses a switch that would overwrite it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.loop.test_checkpoints import DONE, run, session, write, ws
from tui_agent.context import (
    BranchSwitch,
    Prompt,
    Rewind,
    TurnBegin,
    fold,
)
from tui_agent.loop.api import LoopApi
from tui_agent.loop.checkpoints import RestoreRefused
from tui_agent.loop.session_tree import SessionTree
from tui_agent.vocab import user_message


def prompts(loop: LoopApi) -> list[str]:
    return [e.message.text for e in loop.history() if e.message.role == "user"]


async def two_branches(workspace: Path) -> None:
    """`first` writes 1, `second` writes 2; a fork after `first` (files too), then `third`
    writes 3: branch 1 is first → second, branch 2 is first → third (the current one)."""
    loop = await session(workspace, [write("a.txt", "1\n"), DONE, write("a.txt", "2\n"), DONE])
    try:
        await run(loop, "first", "second")
        assert await loop.switch_branch(0, files=True) == ("a.txt",)
    finally:
        await loop.close()
    assert (workspace / "a.txt").read_text() == "1\n"
    loop = await session(workspace, [write("a.txt", "3\n"), DONE], resume=True)
    try:
        assert prompts(loop) == ["first"]
        await run(loop, "third")
    finally:
        await loop.close()


async def test_a_fork_keeps_the_branch_it_left_and_numbers_both(tmp_path: Path) -> None:
    workspace = ws(tmp_path)
    await two_branches(workspace)
    loop = await session(workspace, [], resume=True)
    try:
        tree = await loop.session_tree()
        assert [(n.number, n.parent, n.prompt) for n in tree.nodes] == [
            (0, None, "first"),
            (1, 0, "second"),
            (2, 0, "third"),
        ]
        assert tree.branches() == [0, 2] and tree.tip == 2
        assert (tree.leaf(1), tree.leaf(2), tree.branch_of(1), tree.branch_of(2)) == (1, 2, 1, 2)
        assert [n.files for n in tree.nodes] == [{"a.txt"}] * 3
        assert prompts(loop) == ["first", "third"]  # resumed on the branch it was on
    finally:
        await loop.close()


async def test_switching_and_switching_back_restores_each_branchs_files(tmp_path: Path) -> None:
    workspace = ws(tmp_path)
    await two_branches(workspace)
    loop = await session(workspace, [], resume=True)
    try:
        plan = await loop.switch_plan(1)
        assert (plan.prompt, plan.files, plan.changed_outside) == ("second", ("a.txt",), ())
        assert await loop.switch_branch(1, files=True) == ("a.txt",)
    finally:
        await loop.close()
    assert (workspace / "a.txt").read_text() == "2\n"
    loop = await session(workspace, [], resume=True)
    try:
        assert prompts(loop) == ["first", "second"]
        shown = [getattr(e, "texts", ()) for e in loop.transcript()]
        assert ("second",) in shown and ("third",) not in shown
        await loop.switch_branch(2, files=True)
    finally:
        await loop.close()
    assert (workspace / "a.txt").read_text() == "3\n"
    loop = await session(workspace, [], resume=True)
    try:
        assert prompts(loop) == ["first", "third"]
    finally:
        await loop.close()


async def test_a_conversation_only_switch_leaves_the_files_alone(tmp_path: Path) -> None:
    workspace = ws(tmp_path)
    await two_branches(workspace)
    loop = await session(workspace, [], resume=True)
    try:
        assert await loop.switch_branch(1, files=False) == ()
    finally:
        await loop.close()
    assert (workspace / "a.txt").read_text() == "3\n"
    loop = await session(workspace, [], resume=True)
    try:
        assert prompts(loop) == ["first", "second"]
    finally:
        await loop.close()


async def test_an_outside_edit_refuses_a_switch_with_files_and_nothing_moves(
    tmp_path: Path,
) -> None:
    workspace = ws(tmp_path)
    await two_branches(workspace)
    (workspace / "a.txt").write_text("mine\n", encoding="utf-8")
    loop = await session(workspace, [], resume=True)
    try:
        assert (await loop.switch_plan(1)).changed_outside == ("a.txt",)
        with pytest.raises(RestoreRefused, match=r"a\.txt was changed outside the agent"):
            await loop.switch_branch(1, files=True)
        assert (await loop.session_tree()).tip == 2
    finally:
        await loop.close()
    assert (workspace / "a.txt").read_text() == "mine\n"


def test_a_switch_folds_to_the_history_the_branch_had_when_it_was_left() -> None:
    def turn(n: int, text: str) -> list[TurnBegin | Prompt]:
        return [TurnBegin(turn_id=n), Prompt(prompt_id=f"p{n}", message=user_message(text))]

    records = [
        *turn(0, "a"),
        *turn(1, "b"),
        Rewind(turn=1),  # the old way of leaving a branch: old logs fold the same
        *turn(2, "c"),
        BranchSwitch(turn=1),
    ]
    assert [e.message.text for e in fold(records)] == ["a", "b"]
    assert [e.message.text for e in fold([*records, BranchSwitch(turn=2)])] == ["a", "c"]
    tree = SessionTree.of(records)
    assert ([n.parent for n in tree.nodes], tree.tip) == ([None, 0, 0], 1)


async def test_undo_on_a_branch_undoes_that_branchs_last_change(tmp_path: Path) -> None:
    workspace = ws(tmp_path)
    await two_branches(workspace)
    loop = await session(workspace, [], resume=True)
    try:
        await loop.switch_branch(1, files=True)  # "third", on branch 2, wrote last
        plan = await loop.undo_plan()
        assert plan is not None and plan.prompt == "second"
    finally:
        await loop.close()
