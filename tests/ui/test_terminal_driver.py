"""The terminal driver when the terminal hangs up: the first failed write says the terminal is
gone (once), and what follows is dropped instead of raised, so Textual's writer thread lives on
and its queue never fills (a full queue blocks the event loop for ever); and the SIGCONT that
comes with the hang-up does not start the terminal's application mode a second time."""

from __future__ import annotations

import errno
import io
import os
import signal
import sys
from types import SimpleNamespace

import pytest
from textual import events
from textual.app import App
from textual.drivers.linux_driver import LinuxDriver

from tui_agent.ui import terminal_driver
from tui_agent.ui.terminal_driver import (
    HANDOFF_S,
    KEY_TAKEN_WITHIN_S,
    TerminalDriver,
    _TerminalOutput,
)


class HungUp(io.StringIO):
    """A terminal that takes `good` writes, then fails every write and flush with EIO."""

    def __init__(self, good: int) -> None:
        super().__init__()
        self.good = good

    def write(self, text: str) -> int:
        if self.good == 0:
            raise OSError(errno.EIO, "Input/output error")
        self.good -= 1
        return super().write(text)

    def flush(self) -> None:
        if self.good == 0:
            raise OSError(errno.EIO, "Input/output error")


def test_a_failed_write_reports_the_terminal_gone_once_and_later_output_is_dropped() -> None:
    lost: list[str] = []
    terminal = HungUp(good=1)
    output = _TerminalOutput(terminal, lambda: lost.append("lost"))
    output.write("frame 1")
    assert lost == []
    output.write("frame 2")
    output.flush()
    output.write("frame 3")
    assert lost == ["lost"]
    assert terminal.getvalue() == "frame 1"


def test_a_full_terminal_is_not_taken_for_a_gone_one() -> None:
    class Full(io.StringIO):
        def write(self, text: str) -> int:
            raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")

    lost: list[str] = []
    with pytest.raises(BlockingIOError):
        _TerminalOutput(Full(), lambda: lost.append("lost")).write("frame")
    assert lost == []


async def test_only_a_sigcont_after_its_own_suspend_starts_the_terminal_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kernel sends SIGCONT with SIGHUP: that one must not start application mode anew."""
    monkeypatch.setattr(signal, "signal", lambda *args: None)  # no handler of the test process
    monkeypatch.setattr(os, "kill", lambda *args: None)  # and no SIGSTOP of it
    driver = TerminalDriver(App())
    done: list[str] = []
    monkeypatch.setattr(driver, "suspend_application_mode", lambda: done.append("suspended"))
    monkeypatch.setattr(driver, "resume_application_mode", lambda: done.append("resumed"))

    driver._sigcont_application()  # a hang-up's SIGCONT, or a stray `kill -CONT`
    assert done == []
    driver._sigtstp_application()  # Ctrl+Z from outside
    driver._sigcont_application()  # `fg`
    assert done == ["suspended", "resumed"]


async def test_a_key_is_on_its_way_until_the_app_takes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read by the input thread and posted, or still unread in the terminal: the screen lets
    it go before a frame (`MainScreen.input_waiting`)."""
    app: App[None] = App()
    driver = TerminalDriver(app)
    read, write = os.pipe()
    try:
        driver.fileno = read  # the terminal, as the input thread reads it
        posted: list[object] = []
        driver.send_message = posted.append  # type: ignore[method-assign]
        assert not driver.input_waiting()
        os.write(write, b"a")
        assert driver.input_waiting()  # sent, not read yet
        os.read(read, 1)
        driver.process_message(events.Key("a", "a"))
        driver.process_message(events.Key("b", "b"))
        assert len(posted) == 2
        driver.key_taken()
        assert driver.input_waiting()  # "b" is still in the app's queue
        driver.key_taken()
        assert not driver.input_waiting()
        driver.key_taken()  # a key that did not come through this driver (a test's)
        now = [0.0]
        monkeypatch.setattr(terminal_driver, "time", SimpleNamespace(monotonic=lambda: now[0]))
        driver.process_message(events.Key("c", "c"))
        assert driver.input_waiting()
        now[0] += KEY_TAKEN_WITHIN_S  # a key the app never took (it was closing, say)
        assert not driver.input_waiting()
    finally:
        os.close(read)
        os.close(write)


async def test_threads_get_the_interpreter_sooner_in_application_mode_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The input and writer threads wait at most `HANDOFF_S` for a busy app thread; Python's
    own switch interval is back once the terminal is given back."""
    monkeypatch.setattr(LinuxDriver, "start_application_mode", lambda self: None)
    monkeypatch.setattr(LinuxDriver, "stop_application_mode", lambda self: None)
    before = sys.getswitchinterval()
    driver = TerminalDriver(App())
    driver.start_application_mode()
    try:
        assert sys.getswitchinterval() == pytest.approx(HANDOFF_S)
        driver.start_application_mode()  # started again without a stop (a stray SIGCONT's)
    finally:
        driver.stop_application_mode()
    assert sys.getswitchinterval() == before
