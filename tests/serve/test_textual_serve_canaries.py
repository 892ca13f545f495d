"""Canaries for the private names of textual-serve that `tui_agent/serve/_textual_serve_hooks.py`
touches: each fails, naming the name and what depends on it, when an upgrade removes it or
changes what we rely on; the last checks that the fence's header lists the same names."""

from __future__ import annotations

import re
import signal

from tui_agent.serve import _textual_serve_hooks
from tui_agent.serve._textual_serve_hooks import AppProcess

CANARIES = {
    "AppService._build_environment": "the API keys each tab's app needs",
    "AppService._process": "waiting for a tab's app to end, killing one that does not quit",
}


async def _nothing(*_: object) -> None:
    pass


def _app(command: str) -> AppProcess:
    return AppProcess(
        command,
        write_bytes=_nothing,
        write_str=_nothing,
        close=_nothing,
        extra_environment={"CANARY_KEY": "sk-canary"},
    )


def test_the_environment_the_app_process_is_started_with_gets_our_variables() -> None:
    environment = _app("true")._build_environment(100, 30)
    assert environment["CANARY_KEY"] == "sk-canary", CANARIES["AppService._build_environment"]
    assert environment["COLUMNS"] == "100", CANARIES["AppService._build_environment"]


async def test_a_started_app_process_can_be_killed() -> None:
    app = _app("exec sleep 60")
    await app.start(80, 24)
    app.kill()
    assert await app.exited() == -signal.SIGKILL, CANARIES["AppService._process"]
    await app.stop()


def test_the_fence_lists_exactly_these_names() -> None:
    header = _textual_serve_hooks.__doc__ or ""
    assert set(re.findall(r"^- `([\w.]+)`", header, re.MULTILINE)) == set(CANARIES)
