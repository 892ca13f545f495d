"""The reaper: kills the tool process groups that the agent leaves behind, however it ends.

`_groups` runs this file as a script (`python -I -S`), in a session of its own so the
terminal's signals miss it. Its stdin is a pipe whose other end only the agent holds:
`+PGID` lines add a group, `-PGID` lines drop one. End of file means the agent is gone
(an exit, a crash, kill -9): every group still listed gets SIGKILL, and the reaper exits.
SIGTERM does the same. Standard library only, and nothing of ours: it starts in milliseconds.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import NoReturn


def _leave(signum: int, frame: object) -> NoReturn:
    raise SystemExit(0)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _leave)
    groups: set[int] = set()
    try:
        for line in sys.stdin.buffer:
            number = line[1:].strip()
            if not number.isdigit():
                continue
            if line.startswith(b"+"):
                groups.add(int(number))
            else:
                groups.discard(int(number))
    finally:
        for group in groups:
            try:
                os.killpg(group, signal.SIGKILL)
            except OSError:
                pass


if __name__ == "__main__":
    main()
