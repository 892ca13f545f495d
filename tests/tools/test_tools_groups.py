"""The reaper on real processes: end of file on its pipe kills the groups it was told about.

(kill -9 of the whole agent is tested end to end in tests/e2e/test_cli_reliability.py.)
Waits are bounded polling on whether a process is alive, never timing assertions.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tui_agent.tools import _groups


def _alive(process: subprocess.Popen[bytes]) -> bool:
    return process.poll() is None


def _wait_until_dead(process: subprocess.Popen[bytes], limit_s: float = 10) -> bool:
    deadline = time.monotonic() + limit_s
    while _alive(process) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not _alive(process)


def test_end_of_file_kills_the_listed_groups_and_spares_the_dropped_ones() -> None:
    reaper = subprocess.Popen(
        [sys.executable, "-I", "-S", str(_groups._REAPER)], stdin=subprocess.PIPE
    )
    listed = subprocess.Popen(["sleep", "600"], start_new_session=True)
    dropped = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        assert reaper.stdin is not None
        reaper.stdin.write(f"+{listed.pid}\n+{dropped.pid}\n-{dropped.pid}\nnoise\n".encode())
        reaper.stdin.close()  # what the agent's death looks like from the reaper
        assert _wait_until_dead(listed)
        assert reaper.wait(timeout=10) == 0
        assert _alive(dropped)
    finally:
        for process in (listed, dropped, reaper):
            process.kill()
            process.wait()


def test_ending_a_tracked_group_kills_what_is_left_of_it_and_forgets_it() -> None:
    left = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        _groups.track(left.pid)
        _groups.end_group(left.pid)
        assert left.wait(timeout=10) == -signal.SIGKILL
        assert left.pid not in _groups._live
    finally:
        if _alive(left):
            left.kill()
            left.wait()


async def test_a_command_runs_only_once_its_group_is_tracked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[asyncio.subprocess.Process] = []

    def dies_before_tracking(group: int) -> None:
        raise RuntimeError("the agent died here")

    monkeypatch.setattr(_groups, "track", dies_before_tracking)
    monkeypatch.setattr(
        asyncio, "create_subprocess_exec", _recording(asyncio.create_subprocess_exec, started)
    )
    with pytest.raises(RuntimeError):
        await _groups.spawn_group(["bash", "-c", "touch ran"], cwd=tmp_path)
    [process] = started
    assert await process.wait() == 125  # the gate closed empty: the command never ran
    assert not (tmp_path / "ran").exists()


async def test_a_tracked_command_runs_as_bash_c_in_its_own_group(tmp_path: Path) -> None:
    script = 'echo "$0 $$ $(ps -o pgid= -p $$)" > out'
    process = await _groups.spawn_group(["bash", "-c", script], cwd=tmp_path)
    try:
        assert await process.wait() == 0
    finally:
        await _groups.terminate_group(process.pid)
    name, pid, group = (tmp_path / "out").read_text().split()
    assert (name, int(pid), int(group)) == ("bash", process.pid, process.pid)


def _recording(spawn: Any, started: list[asyncio.subprocess.Process]) -> Any:
    async def spawn_and_record(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        process = await spawn(*args, **kwargs)
        started.append(process)
        return process

    return spawn_and_record
