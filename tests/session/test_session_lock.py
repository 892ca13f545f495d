"""One writer per session: the lock, its stale-lock takeover, forking, and damaged logs at open."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tui_agent.context import Prompt, SessionMeta
from tui_agent.session import LoopConfig, LoopSetupError, Session, open_loop
from tui_agent.session._lock import SessionBusyError, SessionLock
from tui_agent.vocab import user_message


def _workspace(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir(exist_ok=True)
    return path


def _config(workspace: Path, **changes: object) -> LoopConfig:
    script = workspace.parent / "script.json"
    script.write_text(json.dumps({"steps": [{"text": "ok"}]}), encoding="utf-8")
    return LoopConfig(
        workspace=workspace,
        provider="scripted",
        script=str(script),
        **changes,  # type: ignore[arg-type]
    )


def test_a_second_holder_is_told_who_holds_the_session(tmp_path: Path) -> None:
    lock = SessionLock.acquire(tmp_path)

    with pytest.raises(SessionBusyError, match=rf"another tui-agent \(pid {os.getpid()} on "):
        SessionLock.acquire(tmp_path)
    lock.release()
    SessionLock.acquire(tmp_path).release()  # free again once released


def test_the_lock_of_a_killed_process_is_stale_and_taken_over(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, pathlib; from tui_agent.session._lock import SessionLock; "
            "SessionLock.acquire(pathlib.Path(sys.argv[1])); print('held', flush=True); "
            "sys.stdin.read()",
            str(tmp_path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    with pytest.raises(SessionBusyError):
        SessionLock.acquire(tmp_path)

    holder.send_signal(signal.SIGKILL)
    holder.wait()

    lock = SessionLock.acquire(tmp_path)  # the dead holder's lock file is stale
    assert f"pid {os.getpid()} " in (tmp_path / "lock").read_text()
    lock.release()


def test_fork_copies_the_log_but_not_a_torn_last_line(tmp_path: Path) -> None:
    source = Session.create(_workspace(tmp_path))
    whole = Prompt(prompt_id="p1", message=user_message("hi")).model_dump_json() + "\n"
    source.events_path.write_text(whole + '{"type":"prom')

    copy = source.fork()

    assert copy.session_id != source.session_id
    assert copy.events_path.read_text() == whole
    assert Session.latest_for(source.workspace) is not None


async def test_opening_a_session_another_loop_holds_says_how_to_fork(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    first = await open_loop(_config(workspace))
    try:
        with pytest.raises(LoopSetupError, match=r"is busy: .*add --fork to continue a copy"):
            await open_loop(_config(workspace, resume=first.info.session_id))
        forked = await open_loop(_config(workspace, resume=first.info.session_id, fork=True))
        assert forked.info.session_id != first.info.session_id
        await forked.close()
    finally:
        await first.close()
    again = await open_loop(_config(workspace, continue_latest=True))  # closed: free again
    await again.close()


async def test_damaged_lines_are_skipped_with_a_notice_on_open(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    session = Session.create(workspace)
    meta = SessionMeta(session_id=session.session_id, workspace=str(workspace), provider="x")
    prompt = Prompt(prompt_id="p1", message=user_message("hi"))
    session.events_path.write_text(
        f"{meta.model_dump_json()}\n{{oops\n{prompt.model_dump_json()}\n"
    )

    loop = await open_loop(_config(workspace, resume=session.session_id))
    await loop.close()

    assert loop.info.notices == (
        f"{session.events_path}: skipped line 2: not valid event records (the rest of the "
        "session was loaded).",
    )
    assert [entry.message.text for entry in loop.history()] == ["hi"]


async def test_a_log_that_is_a_folder_is_a_setup_error(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    session = Session.create(workspace)
    session.events_path.mkdir()

    with pytest.raises(LoopSetupError, match=r"cannot read .*events\.jsonl: Is a directory"):
        await open_loop(_config(workspace, resume=session.session_id))
    SessionLock.acquire(session.dir).release()  # the failed open let go of the lock
