"""/undo and /rewind against a hostile workspace or a tampered session: a restore never reads or
writes outside the workspace, refuses checkpoint names and blobs it did not make, keeps the
permission bits, and a write onto a FIFO fails at once instead of hanging on the checkpoint."""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from pathlib import Path

import pytest

from tests.loop.test_checkpoints import DONE, edit, run, session, write, ws
from tui_agent.loop import events as ev
from tui_agent.loop.api import LoopApi
from tui_agent.loop.checkpoints import RestoreRefused
from tui_agent.session import Session

HANG_GUARD_S = 20.0  # turns a hang into a failure; nothing here is about speed


def secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    path = outside / "secret.txt"
    path.write_text("not for the workspace\n", encoding="utf-8")
    return path


async def edited_notes(workspace: Path) -> LoopApi:
    """A session whose one turn changed notes.txt from "one" to "two"."""
    (workspace / "notes.txt").write_text("one\n", encoding="utf-8")
    loop = await session(workspace, [edit("notes.txt", "one", "two"), DONE])
    await run(loop, "change it")
    return loop


def path_from(folder: Path, target: Path) -> str:
    """`target` as a path relative to `folder` (with `..` as needed)."""
    return os.path.relpath(target, folder)


def only_blob(loop: LoopApi) -> Path:
    session = Session.open(loop.info.session_id)
    assert session is not None
    (blob,) = session.checkpoint_dir.iterdir()
    return blob


async def test_a_link_named_like_a_temporary_file_does_not_redirect_a_restore(
    tmp_path: Path,
) -> None:
    workspace, target = ws(tmp_path), secret(tmp_path)
    loop = await edited_notes(workspace)
    try:
        (workspace / ".notes.txt.tui-agent-tmp").symlink_to(target)
        plan = await loop.undo_plan()
        assert plan is not None
        assert await loop.restore_files(plan.turn) == ("notes.txt",)
    finally:
        await loop.close()
    assert target.read_text(encoding="utf-8") == "not for the workspace\n"
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "one\n"
    assert not (workspace / "notes.txt").is_symlink()


@pytest.mark.parametrize("relative", [True, False])
async def test_a_checkpoint_name_that_is_no_checkpoint_is_refused(
    tmp_path: Path, relative: bool
) -> None:
    workspace, target = ws(tmp_path), secret(tmp_path)
    loop = await edited_notes(workspace)
    blob = only_blob(loop)
    await loop.close()
    session = Session.open(loop.info.session_id)
    assert session is not None
    crafted = path_from(blob.parent, target) if relative else str(target)
    log = session.events_path.read_text(encoding="utf-8")
    session.events_path.write_text(log.replace(blob.name, crafted), encoding="utf-8")

    resumed = await session_of(workspace)
    try:
        plan = await resumed.undo_plan()
        assert plan is not None and plan.files == ("notes.txt",)
        with pytest.raises(RestoreRefused, match="no checkpoint"):
            await resumed.restore_files(plan.turn)
    finally:
        await resumed.close()
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "two\n"


async def session_of(workspace: Path) -> LoopApi:
    return await session(workspace, [DONE], resume=True)


@pytest.mark.parametrize("swap", ["link", "other content"])
async def test_a_blob_swapped_since_it_was_kept_is_refused(tmp_path: Path, swap: str) -> None:
    workspace, target = ws(tmp_path), secret(tmp_path)
    loop = await edited_notes(workspace)
    try:
        blob = only_blob(loop)
        blob.unlink()
        if swap == "link":
            blob.symlink_to(target)
        else:
            blob.write_text("not what was kept\n", encoding="utf-8")
        plan = await loop.undo_plan()
        assert plan is not None
        with pytest.raises(RestoreRefused, match=r"nothing was restored: notes\.txt: "):
            await loop.restore_files(plan.turn)
    finally:
        await loop.close()
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "two\n"


async def test_a_file_turned_into_a_link_to_the_outside_is_not_restored_through_it(
    tmp_path: Path,
) -> None:
    workspace, target = ws(tmp_path), secret(tmp_path)
    loop = await edited_notes(workspace)
    try:
        (workspace / "notes.txt").unlink()
        (workspace / "notes.txt").symlink_to(target)
        plan = await loop.undo_plan()
        assert plan is not None and plan.changed_outside == ("notes.txt",)
        with pytest.raises(RestoreRefused, match="outside the workspace"):
            await loop.restore_files(plan.turn)
    finally:
        await loop.close()
    assert target.read_text(encoding="utf-8") == "not for the workspace\n"


async def test_a_restore_keeps_the_permission_bits(tmp_path: Path) -> None:
    workspace = ws(tmp_path)
    script = workspace / "run.sh"
    script.write_text("echo one\n", encoding="utf-8")
    script.chmod(0o755)
    loop = await session(workspace, [edit("run.sh", "one", "two"), DONE])
    try:
        await run(loop, "change it")
        assert stat.S_IMODE(script.stat().st_mode) == 0o755
        plan = await loop.undo_plan()
        assert plan is not None
        await loop.restore_files(plan.turn)
    finally:
        await loop.close()
    assert script.read_text(encoding="utf-8") == "echo one\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


async def test_a_file_removed_since_comes_back_with_its_permission_bits(tmp_path: Path) -> None:
    workspace = ws(tmp_path)
    script = workspace / "run.sh"
    script.write_text("echo one\n", encoding="utf-8")
    script.chmod(0o750)
    loop = await session(workspace, [write("run.sh", "echo two\n"), DONE])
    try:
        await run(loop, "rewrite it")
        script.unlink()
        plan = await loop.undo_plan()
        assert plan is not None
        await loop.restore_files(plan.turn)
    finally:
        await loop.close()
    assert script.read_text(encoding="utf-8") == "echo one\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750


def release_readers(pipe: Path, stop: threading.Event) -> None:
    """Until `stop` is set, lets every reader stuck opening `pipe` go with an empty read (the
    bug's reads would otherwise keep the loop from closing and the test run from ending)."""
    while not stop.is_set():
        try:
            os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # no reader is waiting right now
            stop.wait(0.05)


@pytest.mark.parametrize("step", [write("pipe", "data\n"), edit("pipe", "a", "b")])
async def test_writing_onto_a_fifo_fails_at_once_with_a_clear_error(
    tmp_path: Path, step: dict[str, object]
) -> None:
    workspace = ws(tmp_path)
    pipe = workspace / "pipe"
    os.mkfifo(pipe)
    loop = await session(workspace, [step, DONE])
    finished: list[ev.ToolFinished] = []
    loop.subscribe(lambda e: finished.append(e) if isinstance(e, ev.ToolFinished) else None)
    stop = threading.Event()
    try:
        await asyncio.wait_for(run(loop, "write into the pipe"), HANG_GUARD_S)
    except TimeoutError:
        threading.Thread(target=release_readers, args=(pipe, stop), daemon=True).start()
        raise AssertionError("the call hung on the FIFO") from None
    finally:
        await loop.close()
        stop.set()
    (result,) = finished
    assert result.is_error
    assert "pipe is a FIFO (named pipe), not a regular file; refused." in result.output
    assert stat.S_ISFIFO(os.lstat(workspace / "pipe").st_mode)
