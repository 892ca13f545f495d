"""One writer per session: an advisory lock on `sessions/<id>/lock` held while a loop runs.

The lock is `flock` on a file descriptor that is never inherited by tool processes, so the
kernel drops it the moment the holder exits, however it exits (kill -9 included): a lock file
left behind by a dead process is stale by construction and the next opener takes it over. The
file's text names the holder (pid, host, since when) for the message a second opener gets.
"""

from __future__ import annotations

import fcntl
import os
import socket
import time
from pathlib import Path

LOCK_FILE = "lock"


class SessionBusyError(Exception):
    """Another process holds the session; the message says which one."""


class SessionLock:
    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, directory: Path) -> SessionLock:
        """Take the lock of the session in `directory`, or `SessionBusyError` naming the holder."""
        fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "unknown"
            os.close(fd)
            raise SessionBusyError(f"it is open in another tui-agent ({holder})") from None
        except BaseException:
            os.close(fd)
            raise
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
        owner = f"pid {os.getpid()} on {socket.gethostname()}, since {since}\n".encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, owner, 0)
        return cls(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the last descriptor drops the flock
