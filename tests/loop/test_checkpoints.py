"""Checkpoints, /undo and /rewind on the real loop: files written, edited and removed are put
back as they were before a prompt; outside changes are reported; a rewind survives a resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.ui.real_loop import scripted_loop
from tui_agent.loop.api import LoopApi
from tui_agent.loop.events import Notice


def write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def edit(path: str, old: str, new: str) -> dict[str, Any]:
    arguments = {"path": path, "old_string": old, "new_string": new}
    return {"tool_calls": [{"name": "edit_file", "arguments": arguments}]}


def shell(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}


DONE = {"text": "done"}


async def session(workspace: Path, steps: list[dict[str, Any]], *, resume: bool = False) -> LoopApi:
    return await scripted_loop(steps, workspace=workspace, resume=resume)


async def run(loop: LoopApi, *prompts: str) -> None:
    for prompt in prompts:
        result = await (await loop.submit(prompt)).result()
        assert result.type == "completed", result


def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


async def test_undo_removes_a_file_the_last_turn_created_and_says_so(tmp_path: Path) -> None:
    workspace = ws(tmp_path)
    loop = await session(workspace, [write("new.txt", "hi\n"), DONE])
    notices: list[str] = []
    loop.subscribe(lambda e: notices.append(e.text) if isinstance(e, Notice) else None)
    try:
        await run(loop, "create it")
        plan = await loop.undo_plan()
        assert plan is not None and plan.files == ("new.txt",) and plan.prompt == "create it"
        assert await loop.restore_files(plan.turn) == ("new.txt",)
        assert not (workspace / "new.txt").exists()
        assert notices[-1] == "restored new.txt"
        assert await loop.undo_plan() is None  # nothing left to undo
    finally:
        await loop.close()


async def test_undo_puts_back_an_edited_file_turn_by_turn(tmp_path: Path) -> None:
    workspace = ws(tmp_path)
    (workspace / "a.py").write_text("one\n", encoding="utf-8")
    steps = [edit("a.py", "one", "two"), DONE, edit("a.py", "two", "three"), DONE]
    loop = await session(workspace, steps)
    try:
        await run(loop, "first", "second")
        assert (workspace / "a.py").read_text() == "three\n"
        plan = await loop.undo_plan()
        assert plan is not None and plan.prompt == "second"
        await loop.restore_files(plan.turn)
        assert (workspace / "a.py").read_text() == "two\n"
        plan = await loop.undo_plan()
        assert plan is not None and plan.prompt == "first"
        await loop.restore_files(plan.turn)
        assert (workspace / "a.py").read_text() == "one\n"
    finally:
        await loop.close()


async def test_a_file_deleted_since_is_recreated_and_reported_as_changed_outside(
    tmp_path: Path,
) -> None:
    workspace = ws(tmp_path)
    (workspace / "a.py").write_text("one\n", encoding="utf-8")
    loop = await session(workspace, [edit("a.py", "one", "two"), DONE])
    try:
        await run(loop, "change it")
        (workspace / "a.py").unlink()  # someone else removes it
        plan = await loop.undo_plan()
        assert plan is not None and plan.changed_outside == ("a.py",)
        await loop.restore_files(plan.turn)
        assert (workspace / "a.py").read_text() == "one\n"
    finally:
        await loop.close()


async def test_an_outside_edit_is_reported_before_a_rewind_overwrites_it(tmp_path: Path) -> None:
    workspace = ws(tmp_path)
    steps = [write("a.txt", "agent\n"), DONE, write("b.txt", "b\n"), DONE]
    loop = await session(workspace, steps)
    try:
        await run(loop, "write a", "write b")
        (workspace / "a.txt").write_text("person\n", encoding="utf-8")
        first, second = await loop.rewind_plans()
        assert (first.prompt, first.files, first.changed_outside) == (
            "write a",
            ("a.txt", "b.txt"),
            ("a.txt",),
        )
        assert (second.files, second.changed_outside) == (("b.txt",), ())
    finally:
        await loop.close()


async def test_the_plan_lists_the_shell_calls_it_cannot_undo(tmp_path: Path) -> None:
    workspace = ws(tmp_path)
    loop = await session(workspace, [shell("echo hi > out.txt"), DONE])
    try:
        await run(loop, "use the shell")
        (plan,) = await loop.rewind_plans()
        assert plan.shell == ("echo hi > out.txt",) and plan.files == ()
    finally:
        await loop.close()


async def test_a_rewound_conversation_stays_rewound_after_a_resume(tmp_path: Path) -> None:
    workspace = ws(tmp_path)
    steps = [write("a.txt", "1\n"), DONE, write("a.txt", "2\n"), DONE, {"text": "after"}]
    loop = await session(workspace, steps)
    try:
        await run(loop, "first", "second")
        _, second = await loop.rewind_plans()
        await loop.restore_files(second.turn)
        await loop.rewind_conversation(second.turn)
    finally:
        await loop.close()
    assert (workspace / "a.txt").read_text() == "1\n"

    resumed = await session(workspace, steps, resume=True)
    try:
        prompts = [e.message.text for e in resumed.history() if e.message.role == "user"]
        assert prompts == ["first"]
        shown = [getattr(e, "texts", ()) for e in resumed.transcript()]
        assert ("second",) not in shown and ("first",) in shown
        await run(resumed, "third")
        (first, third) = await resumed.rewind_plans()
        assert (first.prompt, third.prompt) == ("first", "third")
    finally:
        await resumed.close()


async def test_a_sub_agents_writes_are_undone_with_the_parents_turn(tmp_path: Path) -> None:
    workspace = ws(tmp_path)
    job = {"description": "write", "prompt": "write sub.txt"}
    steps = [
        {"tool_calls": [{"name": "task", "arguments": job}]},
        write("sub.txt", "from the child\n"),
        {"text": "child done"},
        DONE,
    ]
    loop = await session(workspace, steps)
    try:
        await run(loop, "delegate")
        assert (workspace / "sub.txt").exists()
        plan = await loop.undo_plan()
        assert plan is not None and (plan.prompt, plan.files) == ("delegate", ("sub.txt",))
        await loop.restore_files(plan.turn)
        assert not (workspace / "sub.txt").exists()
    finally:
        await loop.close()


async def test_undo_of_a_turn_whose_files_are_already_back_moves_on_to_the_one_before(
    tmp_path: Path,
) -> None:
    workspace = ws(tmp_path)
    steps = [write("a.txt", "a\n"), DONE, write("b.txt", "b\n"), DONE]
    loop = await session(workspace, steps)
    try:
        await run(loop, "write a", "write b")
        (workspace / "b.txt").unlink()  # the person took it back by hand
        plan = await loop.undo_plan()
        assert plan is not None and (plan.prompt, plan.files) == ("write b", ())
        assert await loop.restore_files(plan.turn) == ()
        plan = await loop.undo_plan()
        assert plan is not None and (plan.prompt, plan.files) == ("write a", ("a.txt",))
    finally:
        await loop.close()
