"""The terminal driver: Textual's Linux driver, made to notice a terminal that went away.

When the terminal hangs up (its window closed, `tmux kill-session`, an ssh link dropped), writing
to it fails with EIO and reading it ends or fails. Textual's driver does not expect that: its
writer thread dies on the first failed write, after which the bounded queue in front of it fills
and the next write blocks the event loop for ever, so no signal handler of ours can run either;
and the SIGCONT the kernel sends with SIGHUP makes it start application mode a second time (it
resumes on any SIGCONT, not only after its own suspend). This driver drops the output the
terminal can no longer take, resumes only after its own suspend, and tells the app once that the
terminal is gone (`Lost`), whichever thread noticed.
"""

from __future__ import annotations

import errno
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message


class TerminalDriver(LinuxDriver):
    class Lost(Message):
        """The terminal hung up: nothing more can be shown or typed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The writer thread (the only user of `_file`) calls write, flush and fileno.
        self._file = _TerminalOutput(sys.__stderr__, self._lose)  # type: ignore[assignment]
        self._lost = threading.Event()
        self._suspended = False

    @property
    def lost(self) -> bool:
        return self._lost.is_set()

    def _lose(self) -> None:
        if not self._lost.is_set():
            self._lost.set()
            self._app.post_message(self.Lost())  # thread-safe: it goes through the app's loop

    def run_input_thread(self) -> None:
        try:
            super().run_input_thread()
        except OSError as error:
            if error.errno != errno.EIO:
                raise  # Textual's own handling: the app panics, showing it
            self._lose()

    def _sigtstp_application(self, *args: Any) -> None:
        self._suspended = self._auto_restart  # whether Textual leaves application mode now
        super()._sigtstp_application(*args)

    def _sigcont_application(self, *args: Any) -> None:
        if self._suspended and not self.lost:
            self._suspended = False
            super()._sigcont_application(*args)


class _TerminalOutput:
    """The terminal as the driver's writer thread sees it: once a write fails, the terminal is
    taken for gone and what follows is dropped, so the writer thread lives on and drains."""

    def __init__(self, file: IO[str] | None, lose: Callable[[], None]) -> None:
        assert file is not None, "a terminal app has a stderr"
        self._file = file
        self._lose = lose
        self._gone = False

    def write(self, text: str) -> None:
        if not self._gone:
            try:
                self._file.write(text)
            except BlockingIOError:
                raise  # a full terminal, not a gone one: Textual's own handling
            except OSError:
                self._gone_now()

    def flush(self) -> None:
        if not self._gone:
            try:
                self._file.flush()
            except BlockingIOError:
                raise
            except OSError:
                self._gone_now()

    def fileno(self) -> int:
        return self._file.fileno()

    def _gone_now(self) -> None:
        self._gone = True
        self._lose()
