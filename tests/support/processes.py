"""Finding a test's processes by a token on their command line (a unique path or number), to
prove that none outlives what should end it, and to clean up after a test that failed."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

WAIT_S = 10.0  # a hang guard for polling, not a timing assertion


def processes_where(part: str, matches: Callable[[bytes], bool]) -> list[int]:
    """Live (non-zombie) processes, other than this one, whose `/proc/PID/<part>` (`cmdline`,
    `environ`) `matches`."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/{part}", "rb") as handle:
                content = handle.read()
            with open(f"/proc/{name}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if matches(content) and state != b"Z":
            found.append(int(name))
    return found


def processes_with(token: str) -> list[int]:
    """Live processes, other than this one, whose command line holds `token`."""
    return processes_where("cmdline", lambda cmdline: token.encode() in cmdline)


def gone(token: str) -> bool:
    """Whether every process marked by `token` has ended, waiting for it up to `WAIT_S`."""
    deadline = time.monotonic() + WAIT_S
    while processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not processes_with(token)


def kill_all_with(token: str) -> None:
    for pid in processes_with(token):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
