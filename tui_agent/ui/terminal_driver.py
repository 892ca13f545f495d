"""The terminal driver: Textual's Linux driver, made to notice a terminal that went away.

When the terminal hangs up (its window closed, `tmux kill-session`, an ssh link dropped), writing
to it fails with EIO and reading it ends or fails. Textual's driver does not expect that: its
writer thread dies on the first failed write, after which the bounded queue in front of it fills
and the next write blocks the event loop for ever, so no signal handler of ours can run either;
and the SIGCONT the kernel sends with SIGHUP makes it start application mode a second time (it
resumes on any SIGCONT, not only after its own suspend). This driver drops the output the
terminal can no longer take, resumes only after its own suspend, and tells the app once that the
terminal is gone (`Lost`), whichever thread noticed. `restore_now` gives a live terminal back
at once, for an exit that cannot wait.

It also says whether a key is on its way to the app (`input_waiting`): bytes the terminal sent
that its input thread has not read yet, or keys it posted that the app has not taken
(`key_taken`). The screen lets such a key go before a frame of streamed text.

A key's echo passes two threads besides the app's: the input thread reads and parses the key,
the writer thread writes the frame that shows it. Each needs the interpreter, and while the
app's thread is busy (drawing the answer, which it does right after a key's echo, on purpose) a
thread that wants the interpreter gets it only when Python makes the busy thread let go: after
its switch interval, 5 ms by default, so a key's echo could wait up to 10 ms while an answer
streams, and little when nothing does. In application mode the interval is `HANDOFF_S`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import sys
import termios
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from textual import events
from textual.app import App
from textual.message import Message

from tui_agent.ui._textual_hooks import LinuxDriverHooks, app_driver

END_WAIT_S = 0.2  # how long last words wait for a frame being written
KEY_TAKEN_WITHIN_S = 1.0  # a key posted longer ago is no longer taken to be on its way
HANDOFF_S = 0.0005  # Python's switch interval in application mode (see the module)

# What leaving application mode turns off: mouse reports, bracketed paste, in-band resize,
# focus reports and the kitty keyboard protocol; line wrap and the cursor come back, and the
# alternate screen goes.
_LEAVE = (
    "\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l\x1b[?2004l\x1b[?2048l\x1b[?1004l"
    "\x1b[<u\x1b[?7h\x1b[?1049l\x1b[?25h"
)


class TerminalDriver(LinuxDriverHooks):
    class Lost(Message):
        """The terminal hung up: nothing more can be shown or typed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._output = _TerminalOutput(sys.__stderr__, self._lose)
        self.replace_output(self._output)
        self._lost = threading.Event()
        self._suspended = False
        self._keys_posted = 0  # by the input thread
        self._posted_at = 0.0  # when it posted the last one (time.monotonic)
        self._keys_taken = 0  # by the app
        self._switch_interval = sys.getswitchinterval()  # Python's, out of application mode

    def start_application_mode(self) -> None:
        sys.setswitchinterval(HANDOFF_S)
        super().start_application_mode()  # type: ignore[no-untyped-call]

    def stop_application_mode(self) -> None:
        super().stop_application_mode()
        sys.setswitchinterval(self._switch_interval)

    def process_message(self, message: Message) -> None:
        if isinstance(message, events.Key):
            self._posted_at = time.monotonic()
            self._keys_posted += 1  # (only the input thread writes it)
        super().process_message(message)

    def key_taken(self) -> None:
        """The app took a key from its queue."""
        self._keys_taken = min(self._keys_taken + 1, self._keys_posted)

    def input_waiting(self) -> bool:
        """A key is on its way: read from the terminal and not taken by the app yet, or not
        read yet (the input thread waits for the interpreter while the app draws)."""
        if self._keys_taken < self._keys_posted:
            if time.monotonic() - self._posted_at < KEY_TAKEN_WITHIN_S:
                return True
            self._keys_taken = self._keys_posted  # one the app never took: no longer waited for
        try:
            return bool(select.select([self.fileno], [], [], 0)[0])
        except (OSError, ValueError):
            return False

    @property
    def lost(self) -> bool:
        return self._lost.is_set()

    def _lose(self) -> None:
        if not self._lost.is_set():
            self._lost.set()
            self.driven_app.post_message(self.Lost())  # thread-safe: it goes through the app's loop

    def restore_now(self) -> None:
        """Give the terminal back as it was (main screen, cursor, modes off, its settings), at
        once and from any thread: for an exit that cannot wait for the orderly one."""
        if self.lost:
            return
        with contextlib.suppress(OSError, termios.error):
            self._output.end_with(_LEAVE)
            if self.attrs_before is not None:
                termios.tcsetattr(self.fileno, termios.TCSANOW, self.attrs_before)

    def run_input_thread(self) -> None:
        try:
            super().run_input_thread()
        except OSError as error:
            if error.errno != errno.EIO:
                raise  # Textual's own handling: the app panics, showing it
            self._lose()

    def suspending(self, leaves_application_mode: bool) -> None:
        self._suspended = leaves_application_mode

    def take_sigcont(self) -> bool:
        if self._suspended and not self.lost:
            self._suspended = False
            return True
        return False


class _TerminalOutput:
    """The terminal as the driver's writer thread sees it: once a write fails, the terminal is
    taken for gone and what follows is dropped, so the writer thread lives on and drains.
    `end_with` writes last words that nothing follows."""

    def __init__(self, file: IO[str] | None, lose: Callable[[], None]) -> None:
        assert file is not None, "a terminal app has a stderr"
        self._file = file
        self._lose = lose
        self._gone = False
        self._lock = threading.Lock()  # a frame is written whole before the last words

    def write(self, text: str) -> None:
        with self._lock:
            if not self._gone:
                try:
                    self._file.write(text)
                except BlockingIOError:
                    raise  # a full terminal, not a gone one: Textual's own handling
                except OSError:
                    self._gone_now()

    def flush(self) -> None:
        with self._lock:
            if not self._gone:
                try:
                    self._file.flush()
                except BlockingIOError:
                    raise
                except OSError:
                    self._gone_now()

    def fileno(self) -> int:
        return self._file.fileno()

    def end_with(self, text: str) -> None:
        """Write `text` straight to the terminal (what the writer buffered is dropped), then
        nothing more. It waits a moment for a frame being written, never for a terminal that
        takes nothing: the terminal is opened anew, not blocking, for these words."""
        locked = self._lock.acquire(timeout=END_WAIT_S)
        try:
            self._gone = True
            flags = os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY
            terminal = os.open(os.ttyname(self.fileno()), flags)
            try:
                os.write(terminal, text.encode())
            finally:
                os.close(terminal)
        finally:
            if locked:
                self._lock.release()

    def _gone_now(self) -> None:
        self._gone = True
        self._lose()


def restore_terminal_now(app: App[Any]) -> None:
    """For an exit that cannot wait for the orderly one (any thread): the app's terminal is
    given back at once (`TerminalDriver.restore_now`)."""
    if isinstance(driver := app_driver(app), TerminalDriver):
        driver.restore_now()
