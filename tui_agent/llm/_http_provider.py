"""What the two HTTP providers share: the client they own (or borrow), and the edge where
parsed events are yielded and every failure becomes a `StreamFailed` value.

A protocol supplies a URL, headers, a JSON body and a fresh `StreamParser` per attempt; the
parser turns server-sent events into stream events and raises `StreamFailure` for anything
the provider reported as an error; an event whose shape the parser did not expect is a
protocol error (`parse_event`). Nothing below this edge escapes as an exception.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Protocol

import httpx

from tui_agent.llm._errors import (
    ErrorContext,
    StreamFailure,
    classify_transport,
    protocol_error,
)
from tui_agent.llm._settings import ProviderSettings
from tui_agent.llm._sse import ServerSentEvent
from tui_agent.llm._transport import post_sse
from tui_agent.vocab import LLMErrorKind, LLMRequest, StreamEvent, StreamFailed


class StreamParser(Protocol):
    @property
    def done(self) -> bool:
        """The provider said the stream is over ([DONE], message_stop): stop reading."""
        ...

    @property
    def has_finish(self) -> bool:
        """A finish reason arrived: a transport failure after it loses nothing that matters."""
        ...

    def feed(self, event: ServerSentEvent) -> list[StreamEvent]: ...

    def end(self) -> list[StreamEvent]:
        """The closing events (`Finished`), or `StreamFailure` for an empty stream."""
        ...


_DRAIN_LIMIT_S = 0.5
# What a parser raises when a well-formed JSON event has a shape it did not expect (a list
# where an object was due, a number for a text, an unhashable index): a protocol error.
_SHAPE_ERRORS = (AttributeError, TypeError, KeyError, IndexError, ValueError)


def parse_event(
    parser: StreamParser, event: ServerSentEvent, ctx: ErrorContext
) -> list[StreamEvent]:
    """The parser's events for one SSE event; `StreamFailure` for any malformed shape."""
    try:
        return parser.feed(event)
    except StreamFailure:
        raise
    except _SHAPE_ERRORS as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise protocol_error(
            ctx, f"a stream event has an unexpected shape ({reason}): {event.data[:200]}"
        ) from None


async def _drain(events: AsyncGenerator[ServerSentEvent]) -> None:
    """Read what follows the provider's end marker (usually just the chunked terminator).

    A fully read response returns its connection to the pool, so the next request skips a
    new TLS handshake. A server that keeps talking or stalls after its end marker only costs
    the connection: after a short limit the response is closed instead.
    """
    try:
        async with asyncio.timeout(_DRAIN_LIMIT_S):
            async for _ in events:
                pass
    except (TimeoutError, StreamFailure, httpx.HTTPError):
        pass


def with_common_options(
    body: dict[str, Any], request: LLMRequest, settings: ProviderSettings
) -> dict[str, Any]:
    """What both wire protocols take the same way: temperature (the request's, else the
    settings'), then `request.extra` verbatim, last, so a caller can override anything."""
    temperature = request.temperature if request.temperature is not None else settings.temperature
    if temperature is not None:
        body["temperature"] = temperature
    body.update(request.extra)
    return body


class HTTPProvider(ABC):
    """Base of the OpenAI-compatible and Anthropic providers."""

    name: str
    default_base_url: str  # used when the settings name no endpoint

    def __init__(self, settings: ProviderSettings, client: httpx.AsyncClient | None = None) -> None:
        self.model = settings.model
        self.settings = settings
        self.base_url = (settings.base_url or self.default_base_url).rstrip("/")
        self._owns_client = client is None
        # A plain-http endpoint (a local server) needs no TLS: skipping the default context
        # skips loading the system's CA bundle, a sixth of a one-shot run's start-up.
        plain = self.base_url.startswith("http://")
        self._client = client if client is not None else httpx.AsyncClient(verify=not plain)
        self._ctx = ErrorContext(
            provider=self.name,
            model=settings.model,
            secrets=(settings.api_key,) if settings.api_key else (),
            connect_timeout_s=settings.connect_timeout_s,
            idle_timeout_s=settings.idle_timeout_s,
        )

    @abstractmethod
    def url(self) -> str: ...

    @abstractmethod
    def headers(self) -> dict[str, str]: ...

    @abstractmethod
    def body(self, request: LLMRequest) -> dict[str, Any]: ...

    @abstractmethod
    def parser(self) -> StreamParser: ...

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        parser = self.parser()
        try:
            payload = json.dumps(self.body(request), ensure_ascii=False).encode("utf-8")
            events = post_sse(self._client, self.url(), self.headers(), payload, self._ctx)
            try:
                async for event in events:
                    for item in parse_event(parser, event, self._ctx):
                        yield item
                    if parser.done:
                        await _drain(events)
                        break
            finally:
                # Closing the inner generator leaves `client.stream`, which closes the response.
                await events.aclose()
            tail = parser.end()
        except StreamFailure as failure:
            yield StreamFailed(error=failure.error)
            return
        except httpx.HTTPError as exc:
            if not parser.has_finish:
                yield StreamFailed(error=classify_transport(self._ctx, exc))
                return
            tail = parser.end()
        except Exception as exc:  # providers never raise: an unforeseen bug is a value too
            message = f"unexpected {type(exc).__name__}: {exc}"
            yield StreamFailed(error=self._ctx.error(LLMErrorKind.UNKNOWN, message))
            return
        for item in tail:
            yield item

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()
