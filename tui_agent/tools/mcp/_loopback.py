"""The loopback server a browser is redirected to at the end of an OAuth login.

Listens on 127.0.0.1 at the port of the registered redirect URI, answers the first request
to `/callback` with a short page saying the person may close the tab, and hands its query
(`code`, `state`, `iss`, or `error`) to whoever awaits `result()`. Other paths (a browser's
`/favicon.ico`) get a 404 and do not end the wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
from urllib.parse import parse_qsl, urlsplit

CALLBACK_PATH = "/callback"
_PAGE = (
    "<!doctype html><meta charset=utf-8><title>tui-agent</title>"
    "<p>{text}</p><p>You can close this tab and return to tui-agent.</p>"
)


class Loopback:
    def __init__(self) -> None:
        self._result: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()
        self._server: asyncio.Server | None = None

    @classmethod
    async def start(cls, host: str, port: int | None) -> Loopback:
        loopback = cls()
        loopback._server = await asyncio.start_server(loopback._serve, host, port or 0)
        return loopback

    async def result(self) -> dict[str, str]:
        return await asyncio.shield(self._result)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = await asyncio.wait_for(reader.readline(), timeout=10)
            target = request_line.decode("latin-1").split(" ")[1]
        except (TimeoutError, IndexError, ConnectionError):
            writer.close()
            return
        parts = urlsplit(target)
        if parts.path != CALLBACK_PATH:
            writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        else:
            query = dict(parse_qsl(parts.query))
            failed = query.get("error")
            text = f"Login failed: {html.escape(failed)}" if failed else "Logged in."
            body = _PAGE.format(text=text).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            if not self._result.done():
                self._result.set_result(query)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()
