"""One streamed POST over httpx, turned into server-sent events or a classified failure.

Both HTTP providers share this: it opens the request with the connect timeout and the idle
timeout (httpx's read timeout is exactly "time allowed between two chunks"), turns an error
status or a body that is not an event stream into a `StreamFailure`, and decodes the rest.
The response lives inside `async with client.stream(...)`, so when the consumer cancels its
task or closes the generator, the response is closed on the spot: the connection is dropped
(the server sees the disconnect) instead of going back to the pool half read.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping

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
        async for chunk in response.aiter_bytes():
            events = decoder.feed(chunk)
            if head is not None:
                if events:
                    head = None
                elif sum(map(len, head)) < _MAX_ERROR_BODY:
                    head.append(chunk)
            for event in events:
                yield event
        events = decoder.close()
        text = b"".join(head or ()).decode("utf-8", errors="replace").lstrip()
        if head is not None and not events and text.startswith(("<", "{")):
            raise StreamFailure(classify_unexpected_body(ctx, response.status_code, text))
        for event in events:
            yield event
