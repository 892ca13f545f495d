"""`tui-agent serve` used in a real browser: the machine's Chromium, headless, driven by
Playwright. A person opens the printed URL, asks for an edit, approves it, cancels a long
command with Esc, reloads the page (the same app comes back), and the file and the session log
show what happened.

The page draws the terminal on a canvas, so what the app shows is read from the websocket's
frames (the terminal's output); every wait is Playwright's, on a frame, a file or the log.
`TUI_AGENT_SERVE_SCREENSHOT=PATH` saves the page as it looks after the reload (`make
screenshots` writes `screenshots/serve-browser.png` that way).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve.served import SECRET, Served, serve

CHROMIUM = "/usr/bin/chromium"
INSTALL = "apt-get install -y chromium"
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason=f"Chromium is not installed ({INSTALL}; `make test` does it as root)",
)
sync_api = pytest.importorskip("playwright.sync_api")

WAIT_S = 30
ANSWER = "I will write hello.txt for you."
STEPS = [
    {
        "text": ANSWER,
        "tool_calls": [
            {"name": "write_file", "arguments": {"path": "hello.txt", "content": "hi, browser\n"}}
        ],
    },
    {
        "text": "Written. Now a long command.",
        "tool_calls": [
            {"name": "shell", "arguments": {"command": "echo started > started.txt; sleep 600"}}
        ],
    },
]
_ESCAPES = re.compile(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Za-z]|.)")


class Terminal:
    """What the current websocket has carried to the page, as text without escape codes."""

    def __init__(self) -> None:
        self.text = ""
        self.socket: object = None

    def follow(self, socket: sync_api.WebSocket) -> None:
        self.text, self.socket = "", socket
        socket.on("framereceived", self.feed)

    def feed(self, payload: str | bytes) -> bool:
        if isinstance(payload, bytes):
            self.text += _ESCAPES.sub("", payload.decode("utf-8", "replace"))
        return True

    def wait_for(self, page: sync_api.Page, text: str) -> None:
        """Until `text` has been shown (Playwright waits for each next frame), for at most
        WAIT_S (an app that keeps drawing something else sends frames all the while)."""
        deadline = time.monotonic() + WAIT_S
        while text not in self.text:
            assert isinstance(self.socket, sync_api.WebSocket)
            left_ms = (deadline - time.monotonic()) * 1000
            try:
                if left_ms <= 0:
                    raise sync_api.TimeoutError("")
                self.socket.wait_for_event("framereceived", timeout=left_ms)
            except sync_api.TimeoutError:
                shown = self.text[-1500:]
                raise AssertionError(f"never shown: {text!r}; last: {shown!r}") from None


@pytest.fixture
def browser() -> Iterator[sync_api.BrowserContext]:
    with (
        sync_api.sync_playwright() as playwright,
        tempfile.TemporaryDirectory(prefix="serve-chromium-") as profile,
    ):
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            # A closed network refuses Chromium's background connections: do not make them.
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
            viewport={"width": 1100, "height": 640},
        )
        yield context
        context.close()


def test_a_person_works_in_the_browser_tab_as_in_the_terminal(
    tmp_path: Path, browser: sync_api.BrowserContext
) -> None:
    with serve(tmp_path, STEPS, "--approval-mode", "ask") as served:
        _work_in_the_tab(served, browser)
    [log] = sorted(Path(os.environ["TUI_AGENT_HOME"]).glob("sessions/*/events.jsonl"))
    records = [json.loads(line) for line in log.read_text().splitlines()]
    results = [r["outcome"] for r in records if r["type"] == "tool.result"]
    assert results == ["succeeded", "aborted"]
    assert records[-1]["type"] == "turn.end"
    assert records[-1]["result"]["type"] == "cancelled"
    assert SECRET not in log.read_text()


def _work_in_the_tab(served: Served, browser: sync_api.BrowserContext) -> None:
    browser.grant_permissions(["clipboard-read", "clipboard-write"])
    page = browser.new_page()
    terminal = Terminal()
    page.on("websocket", terminal.follow)
    with page.expect_websocket():
        page.goto(served.url)
    assert SECRET not in page.content()
    terminal.wait_for(page, "ask")  # the status bar: the app is drawn
    page.click("#terminal")
    page.keyboard.type("please write hello.txt")
    page.keyboard.press("Enter")
    terminal.wait_for(page, ANSWER)  # the scripted model's answer, streamed
    terminal.wait_for(page, "Allow write_file?")  # the approval box, which takes the keys
    page.keyboard.press("Enter")  # its first choice: yes, once
    terminal.wait_for(page, "sleep 600")  # the next approval, for the command
    page.keyboard.press("Enter")
    served.wait_for_file("started.txt")
    page.keyboard.press("Escape")  # cancels the running command
    served.wait_for_log_end()
    assert (served.workspace / "hello.txt").read_text() == "hi, browser\n"
    with page.expect_websocket():
        page.reload()
    terminal.wait_for(page, ANSWER)  # the same app, its transcript repainted
    terminal.wait_for(page, "palette")  # down to the footer's last key
    if shot := os.environ.get("TUI_AGENT_SERVE_SCREENSHOT"):
        page.screenshot(path=shot)
    page.click("#terminal")
    page.keyboard.press("Shift+Tab")  # the approval mode: ask, then auto-edit
    terminal.wait_for(page, "auto-edit")
    page.keyboard.type("/copy")
    page.keyboard.press("Enter")  # the last answer, to the browser's clipboard
    page.wait_for_function("async () => (await navigator.clipboard.readText()).includes('long')")
