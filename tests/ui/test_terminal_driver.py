"""The terminal driver's output when the terminal hangs up: the first failed write says the
terminal is gone (once), and what follows is dropped instead of raised, so Textual's writer
thread lives on and its queue never fills (a full queue blocks the event loop for ever)."""

from __future__ import annotations

import errno
import io

import pytest

from tui_agent.ui.terminal_driver import _TerminalOutput


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
