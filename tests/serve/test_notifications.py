"""The app's desktop notification (OSC 9 in its terminal output, `ui/notifications.py`) reaches
the page as a `["notify", text]` message, which the page shows as a browser notification.
A stand-in app speaks textual-serve's protocol: its start line, then one data packet."""

from __future__ import annotations

import shlex
import sys
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from tui_agent.serve._server import web_app
from tui_agent.serve._tabs import TabLimits, Tabs

TOKEN = "Tok3n-of-the-test_abcdefgh"
APP = r"""
import sys, time
out = sys.stdout.buffer
data = b"\x1b]9;turn completed: s1\x07\x1b]777;notify;tui-agent;turn completed: s1\x07"
out.write(b"__GANGLION__\n" + b"D" + len(data).to_bytes(4, "big") + data)
out.flush()
sys.stdin.buffer.read(1)  # until the server sends anything (it asks it to quit)
"""

Client = TestClient[aiohttp.web.Request, aiohttp.web.Application]


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    command = "exec " + shlex.join([sys.executable, "-c", APP])  # as the server runs the app
    tabs = Tabs(command, {}, TabLimits(quit_s=5))
    async with TestClient(TestServer(web_app(TOKEN, tabs))) as client:
        yield client
        await tabs.end_all()


async def test_the_apps_notification_reaches_the_page_as_a_message(client: Client) -> None:
    socket = await client.ws_connect(f"/ws/{TOKEN}/tab1")
    terminal = await socket.receive()
    assert terminal.type == aiohttp.WSMsgType.BINARY and b"\x1b]9;" in terminal.data
    notice = await socket.receive_json()
    assert notice == ["notify", "turn completed: s1"]
    await socket.close()
