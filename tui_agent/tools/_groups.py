"""Process groups of tool commands: tracked while they live, ended on every exit path.

Each command runs in a process group of its own, started by `spawn_group`, which makes sure
the group is tracked before the command runs. `terminate_group` ends one: SIGTERM, then SIGKILL
after `KILL_GRACE_S`. Other children that lead a group of their own (the search workers, MCP
stdio servers) are tracked with `track` once started, and `untrack`ed once ended (`end_group`
kills what is left first). For the exits that skip all that:

- a small reaper process (`_reaper.py`, started with the first group) is told every group;
  it holds the read end of a pipe that only this process can write, so when this process
  ends in any way, kill -9 included, the reaper reads end of file and kills every group
  still listed, at once;
- `kill_all` kills the live groups synchronously, for `os._exit` paths (a second Ctrl+C),
  and an `atexit` hook calls it on an ordinary interpreter exit.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tui_agent import keys

KILL_GRACE_S = 1.0
_REAPER = Path(__file__).with_name("_reaper.py")

_live: set[int] = set()
_reaper: subprocess.Popen[bytes] | None = None


async def spawn_group(argv: Sequence[str], **options: Any) -> asyncio.subprocess.Process:
    """`argv` (`bash -c command`, or a sandbox's launcher of it) in a new session (its pid is
    the group id), tracked before it runs.

    The first bash waits on a pipe for the word to go, which comes once the group is tracked,
    then replaces itself with the command (same pid, same group). Were this process to die in
    between, the pipe would end empty and the command never run. `options` go to
    `asyncio.create_subprocess_exec` (streams, cwd, env)."""
    hold, release = os.pipe()
    try:
        wait_then_run = f'read -r -u {hold} _ || exit 125; exec {hold}<&-; exec "$@"'
        try:
            process = await asyncio.create_subprocess_exec(
                "bash",
                "-c",
                wait_then_run,
                "tui-agent-shell",  # $0
                *argv,
                pass_fds=(hold,),
                start_new_session=True,
                **options,
            )
        finally:
            os.close(hold)
        track(process.pid)
        os.write(release, b"go\n")
    finally:
        os.close(release)
    return process


def track(group: int) -> None:
    global _reaper
    _live.add(group)
    if _reaper is None or _reaper.poll() is not None:
        # The first group, or the reaper died: a new one learns every live group.
        _reaper = _start_reaper()
        _tell("".join(f"+{live}\n" for live in _live))
    else:
        _tell(f"+{group}\n")


def end_group(group: int) -> None:
    """SIGKILL what is left of a group, if anything (a group with members keeps its id, so no
    stranger's group is hit), and forget it."""
    if group_members(group):
        _signal_group(group, signal.SIGKILL)
    untrack(group)


def untrack(group: int) -> None:
    """The group ended (or is another's to end): the reaper forgets it."""
    if group in _live:
        _live.discard(group)
        _tell(f"-{group}\n")


@atexit.register
def kill_all() -> None:
    """SIGKILL every live group now (no grace: the process is leaving)."""
    for group in list(_live):
        _signal_group(group, signal.SIGKILL)
        untrack(group)


def _tell(lines: str) -> None:
    if _reaper is None or _reaper.stdin is None:
        return
    try:
        _reaper.stdin.write(lines.encode())
        _reaper.stdin.flush()
    except OSError:
        pass  # it died meanwhile: the next `track` starts another


def _start_reaper() -> subprocess.Popen[bytes] | None:
    try:
        return subprocess.Popen(
            [sys.executable, "-I", "-S", str(_REAPER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env=keys.tool_environment(),
        )
    except OSError:
        return None  # then only `kill_all` and the atexit hook stand guard


def group_members(group: int) -> list[int]:
    """Live (non-zombie) processes of a process group, from /proc; killpg(0) where it is absent."""
    try:
        names = os.listdir("/proc")
    except OSError:
        try:
            os.killpg(group, 0)
        except OSError:
            return []
        return [group]
    members = []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == group and fields[0] != b"Z":
            members.append(int(name))
    return members


def child_group(marker: str) -> int | None:
    """The process group led by a child of this process whose environment holds `marker` (a
    `NAME=value` line), for children started by code that does not tell us their pid (the MCP
    SDK's stdio servers); None when there is none, or no /proc to look in."""
    wanted = marker.encode()
    me = os.getpid()
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return None
    for name in names:
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
            fields = stat[stat.rfind(b")") + 2 :].split()
            if int(fields[1]) != me or int(fields[2]) != int(name):  # our child, a group leader
                continue
            with open(f"/proc/{name}/environ", "rb") as handle:
                if wanted in handle.read().split(b"\0"):
                    return int(name)
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile, or not ours to read
    return None


def _signal_group(group: int, sig: int) -> None:
    try:
        os.killpg(group, sig)
    except OSError:
        pass


async def terminate_group(group: int) -> None:
    """SIGTERM the group, then SIGKILL whatever is left after `KILL_GRACE_S`."""
    try:
        if not group_members(group):
            return
        _signal_group(group, signal.SIGTERM)
        deadline = asyncio.get_running_loop().time() + KILL_GRACE_S
        # Nothing notifies us when the last member of a group dies, so poll.
        while group_members(group) and asyncio.get_running_loop().time() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.02)
    finally:  # also when cancelled while waiting: never leave the group behind
        _signal_group(group, signal.SIGKILL)
        untrack(group)
