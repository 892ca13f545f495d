"""A real HTTP/1.1 server on 127.0.0.1 for provider tests, with faults on demand.

Each request is answered by the next `Reply` (or by a function of the request): a status,
headers, and body pieces written one by one (chunked transfer encoding unless told
otherwise), then optionally a stall until the client goes away, or a connection reset.
The server records every request and counts open connections, so a test can see a client
disconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
}
# Bodies are stored decoded (INDEX.md), so a recorded content-encoding no longer applies.
_FRAMING = {"content-length", "transfer-encoding", "connection", "content-encoding"}


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    pieces: list[bytes] = field(default_factory=list)
    chunked: bool = True  # False: one Content-Length body
    piece_delay_s: float = 0.0
    then: str = "close"  # "close" | "stall" (wait for the client to leave) | "reset"


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def split(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)] or [b""]


class LocalServer:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.answer: Callable[[Recorded], Reply] | None = None
        self.requests: list[Recorded] = []
        self.open_connections = 0
        self.connections_accepted = 0
        self.client_left = asyncio.Event()  # a client closed while we stalled or wrote
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            # Handlers still stalled on a client would keep wait_closed() waiting.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)

    async def wait_until_client_left(self, limit_s: float = 5.0) -> bool:
        """A hang guard, not a timing assertion: True once a client disconnect was seen."""
        try:
            await asyncio.wait_for(self.client_left.wait(), limit_s)
        except TimeoutError:
            return False
        return True

    def _next_reply(self, request: Recorded) -> Reply:
        if self.answer is not None:
            return self.answer(request)
        return self.replies.pop(0)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open_connections += 1
        self.connections_accepted += 1
        try:
            while True:
                request = await self._read_request(reader)
                if request is None:
                    return
                self.requests.append(request)
                reply = self._next_reply(request)
                if not await self._write(reply, reader, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            self.client_left.set()
        finally:
            self.open_connections -= 1
            with contextlib.suppress(Exception):
                writer.close()

    async def _read_request(self, reader: asyncio.StreamReader) -> Recorded | None:
        head = await reader.readuntil(b"\r\n\r\n") if not reader.at_eof() else b""
        if not head:
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        return Recorded(method, path, headers, body)

    async def _write(
        self, reply: Reply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Send one reply; False when the connection is over afterwards."""
        status_line = f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}\r\n"
        headers = {k: v for k, v in reply.headers.items() if k.lower() not in _FRAMING}
        body = b"".join(reply.pieces)
        if reply.chunked:
            headers["transfer-encoding"] = "chunked"
        else:
            headers["content-length"] = str(len(body))
        head = status_line + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        writer.write(head.encode("latin-1"))
        await writer.drain()
        if reply.chunked:
            for piece in reply.pieces:
                if reply.piece_delay_s:
                    await asyncio.sleep(reply.piece_delay_s)
                if piece:
                    writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    await writer.drain()
        else:
            writer.write(body)
            await writer.drain()
        if reply.then == "stall":
            # Wait for the client to hang up: read() returns b"" (or fails) when it does.
            with contextlib.suppress(ConnectionError):
                await reader.read()
            self.client_left.set()
            return False
        if reply.then == "reset":
            sock = writer.get_extra_info("socket")
            if sock is not None:
                # Linger 0: close() sends RST instead of FIN, as a dying proxy would.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        if reply.chunked:
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        return True
