"""How tabs' apps end under `tui-agent serve`: a stopped server and an idle tab cancel the turn
and seal the log (the session can be resumed), and the session limit turns a tab away. A
websocket client stands in for the page (textual-serve's protocol: JSON text messages in,
the terminal's bytes out); every wait is on a file, a log, a message or a process."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp

from tests.serve.served import SECRET, Served, serve

LONG_COMMAND = [
    {"tool_calls": [{"name": "shell", "arguments": {"command": "echo started > s.txt; sleep 600"}}]}
]


def _socket_url(served: Served, tab: str) -> str:
    parts = urlsplit(served.url)
    token = parts.query.removeprefix("token=")
    return f"ws://{parts.netloc}/ws/{token}/{tab}?width=100&height=30"


async def _start_turn(
    session: aiohttp.ClientSession, served: Served
) -> aiohttp.ClientWebSocketResponse:
    socket = await session.ws_connect(_socket_url(served, "tab1"))
    await socket.send_json(["stdin", "run it\r"])
    return socket


def _app_processes(server: int) -> list[int]:
    """The server's children: one app per tab."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == server:
            children.append(int(stat.parent.name))
    return children


def _shows_the_key(pid: int) -> bool:
    return any(
        SECRET.encode() in Path(f"/proc/{pid}/{view}").read_bytes()
        for view in ("environ", "cmdline")
    )


def _assert_cancelled_and_sealed(records: list[dict[str, object]]) -> None:
    assert [r["outcome"] for r in records if r["type"] == "tool.result"] == ["aborted"]
    assert records[-1]["type"] == "turn.end"
    assert records[-1]["result"] == {**records[-1]["result"], "type": "cancelled"}  # type: ignore[dict-item]


async def test_stopping_the_server_cancels_each_tabs_turn_and_seals_its_log(tmp_path: Path) -> None:
    with serve(tmp_path, LONG_COMMAND, "--yolo") as served:
        async with aiohttp.ClientSession() as session:
            await _start_turn(session, served)
            served.wait_for_file("s.txt")
            [app] = _app_processes(served.process.pid)
            # The app got the key through its environment and wiped it from there.
            assert not _shows_the_key(app)
            served.process.send_signal(signal.SIGTERM)
            assert served.process.wait(timeout=60) == 0
    _assert_cancelled_and_sealed(served.wait_for_log_end())


async def test_an_idle_tabs_app_ends_cancelling_its_turn(tmp_path: Path) -> None:
    with serve(tmp_path, LONG_COMMAND, "--yolo", "--idle-timeout", "0.02") as served:
        async with aiohttp.ClientSession() as session:
            socket = await _start_turn(session, served)
            # The tab stays busy (a focus message restarts its idle time) until the command
            # runs; from then on it is idle.
            deadline = time.monotonic() + 60
            while not (served.workspace / "s.txt").exists():
                assert time.monotonic() < deadline, "the command never started"
                await socket.send_json(["focus"])
                await asyncio.sleep(0.05)
            async for _message in socket:  # until the app ends and the server closes it
                pass
        _assert_cancelled_and_sealed(served.wait_for_log_end())
        assert served.process.poll() is None  # the server runs on


async def test_a_tab_beyond_max_sessions_is_told_and_turned_away(tmp_path: Path) -> None:
    with serve(tmp_path, [], "--max-sessions", "1") as served:
        async with aiohttp.ClientSession() as session:
            first = await session.ws_connect(_socket_url(served, "tab1"))
            await first.receive()  # its app started
            second = await session.ws_connect(_socket_url(served, "tab2"))
            told = await second.receive()
            assert b"all 1 sessions of this server are in use" in told.data
            assert (await second.receive()).type in (
                aiohttp.WSMsgType.CLOSE,
                aiohttp.WSMsgType.CLOSED,
            )
