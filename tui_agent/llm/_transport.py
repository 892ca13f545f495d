"""One streamed POST over httpx, turned into server-sent events or a classified failure.

Both HTTP providers share this: it opens the request with the connect timeout and the idle
timeout (the time allowed between two events: SSE comments do not count), turns an error
status or a body that is not an event stream into a `StreamFailure`, and decodes the rest.
The response lives inside `async with client.stream(...)`, so when the consumer cancels its
task or closes the generator, the response is closed on the spot: the connection is dropped
(the server sees the disconnect) instead of going back to the pool half read.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Mapping

import httpx

from tui_agent.llm._errors import (
    ErrorContext,
    StreamFailure,
    classify_status,
    classify_unexpected_body,
)
from tui_agent.llm._sse import ServerSentEvent, SSEDecoder

_MAX_ERROR_BODY = 64 * 1024  # an error page is read up to here: enough for any message


def timeouts(ctx: ErrorContext) -> httpx.Timeout:
    return httpx.Timeout(
        connect=ctx.connect_timeout_s,
        read=ctx.idle_timeout_s,
        write=ctx.idle_timeout_s,
        pool=ctx.connect_timeout_s,
    )


async def _read_limited(response: httpx.Response) -> str:
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        parts.append(chunk)
        size += len(chunk)
        if size >= _MAX_ERROR_BODY:
            break
    return b"".join(parts)[:_MAX_ERROR_BODY].decode("utf-8", errors="replace")


def _is_event_stream(content_type: str) -> bool:
    # Some servers omit the header or send text/plain; only JSON and HTML are surely not SSE.
    lowered = content_type.lower()
    return "event-stream" in lowered or not ("json" in lowered or "html" in lowered)


class _IdleClock:
    """The idle timeout, restarted by events only.

    httpx's own read timeout restarts on any byte, so a proxy's `: keep-alive` comment every
    few seconds would hold a dead stream open forever; here only dispatched events (data)
    restart the clock. Each wait is bounded on its own, never across a `yield`.
    """

    __slots__ = ("_deadline", "_idle_s", "_loop")

    def __init__(self, idle_s: float) -> None:
        self._idle_s = idle_s
        self._loop = asyncio.get_running_loop()
        self._deadline = self._loop.time() + idle_s

    def restart(self) -> None:
        self._deadline = self._loop.time() + self._idle_s

    async def next(self, chunks: AsyncIterator[bytes]) -> bytes | None:
        """The next chunk, None at the end; `httpx.ReadTimeout` once the clock runs out."""
        try:
            async with asyncio.timeout_at(self._deadline):
                return await anext(chunks)
        except StopAsyncIteration:
            return None
        except TimeoutError:
            raise httpx.ReadTimeout(f"no data for {self._idle_s:g} s") from None


async def post_sse(
    client: httpx.AsyncClient,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    ctx: ErrorContext,
) -> AsyncGenerator[ServerSentEvent]:
    """Yield the events of one streamed POST; raise `StreamFailure` or `httpx.HTTPError`."""
    async with client.stream(
        "POST", url, headers=headers, content=body, timeout=timeouts(ctx)
    ) as response:
        if response.status_code >= 300:
            text = await _read_limited(response)
            raise StreamFailure(classify_status(ctx, response.status_code, response.headers, text))
        if not _is_event_stream(response.headers.get("content-type", "")):
            text = await _read_limited(response)
            raise StreamFailure(classify_unexpected_body(ctx, response.status_code, text))
        decoder = SSEDecoder()
        # Until the first event, keep the start of the body: a stream that never yields one
        # may be an HTML page or a JSON error sent under an event-stream content type.
        head: list[bytes] | None = []
        chunks, idle = response.aiter_bytes(), _IdleClock(ctx.idle_timeout_s)
        while (chunk := await idle.next(chunks)) is not None:
            events = decoder.feed(chunk)
            if head is not None:
                if events:
                    head = None
                elif sum(map(len, head)) < _MAX_ERROR_BODY:
                    head.append(chunk)
            for event in events:
                yield event
            if events:  # after the yields: the consumer's own time is not the server's
                idle.restart()
        events = decoder.close()
        text = b"".join(head or ()).decode("utf-8", errors="replace").lstrip()
        if head is not None and not events and text.startswith(("<", "{")):
            raise StreamFailure(classify_unexpected_body(ctx, response.status_code, text))
        for event in events:
            yield event
