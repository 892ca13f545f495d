"""The reaper on real processes: end of file on its pipe kills the groups it was told about.

(kill -9 of the whole agent is tested end to end in tests/e2e/test_cli_reliability.py.)
Waits are bounded polling on whether a process is alive, never timing assertions.
"""

from __future__ import annotations

import subprocess
import sys
import time

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
