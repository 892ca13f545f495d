"""Faults from a real local server: each ends in the right error value, never a hang or a raise.

`asyncio.wait_for(..., HANG_GUARD_S)` only turns a hang into a clear failure; no assertion is
about how fast anything is.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import socket
import time
from contextlib import nullcontext

import pytest

from tests.llm.helpers import (
    HANG_GUARD_S,
    SSE_HEADERS,
    collect,
    fixture,
    openai_chunk,
    run_once,
    settings_for,
)
from tests.llm.server import LocalServer, Reply, split
from tui_agent.llm import ProviderSettings, make_provider
from tui_agent.vocab import (
    FinishReason,
    LLMErrorKind,
    LLMRequest,
    StreamEvent,
    TextDelta,
    user_message,
)


async def test_connection_reset_mid_stream_is_a_connection_error(server: LocalServer) -> None:
    server.replies.append(
        Reply(headers=SSE_HEADERS, pieces=[openai_chunk("Hel"), openai_chunk("lo")], then="reset")
    )
    out = await run_once(settings_for(server))
    assert out.text == "Hello"
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.CONNECTION
    assert out.error.retryable


async def test_reset_after_the_finish_reason_still_finishes(server: LocalServer) -> None:
    server.replies.append(
        Reply(
            headers=SSE_HEADERS,
            pieces=[openai_chunk("Hi"), openai_chunk(finish="stop")],
            then="reset",
        )
    )
    out = await run_once(settings_for(server))
    assert out.finish is not None
    assert out.finish.reason is FinishReason.END_TURN


async def test_stall_past_the_idle_timeout_is_a_timeout(server: LocalServer) -> None:
    server.replies.append(Reply(headers=SSE_HEADERS, pieces=[openai_chunk("Hel")], then="stall"))
    out = await run_once(settings_for(server, idle_timeout_s=0.3))
    assert out.text == "Hel"
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.TIMEOUT
    assert "idle" in out.error.message
    assert await server.wait_until_client_left()


async def test_refused_connection_is_unreachable() -> None:
    probe = LocalServer()
    await probe.start()
    await probe.stop()  # the port is now closed
    settings = ProviderSettings(kind="openai", model="m", base_url=f"{probe.url}/v1")
    out = await run_once(settings)
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.UNREACHABLE
    assert out.error.message == "cannot reach the server: connection refused"
    assert out.error.retryable  # briefly: the retry policy gives it few attempts


async def test_unknown_host_is_unreachable() -> None:
    settings = ProviderSettings(kind="openai", model="m", base_url="http://no-such-host.invalid/v1")
    out = await run_once(settings)
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.UNREACHABLE
    assert "host not found" in out.error.message


async def test_html_page_with_status_200_is_a_protocol_error(server: LocalServer) -> None:
    page = b"<!DOCTYPE html><html><head><title>Sign in to the Wi-Fi</title></head><body/></html>"
    server.replies.append(Reply(headers={"content-type": "text/html"}, pieces=[page]))
    out = await run_once(settings_for(server))
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.PROTOCOL
    assert "Sign in to the Wi-Fi" in out.error.message
    assert "<html" not in out.error.message


async def test_html_page_sent_as_event_stream_is_a_protocol_error(server: LocalServer) -> None:
    page = b"<html><head><title>Proxy error</title></head><body>oops</body></html>\n"
    server.replies.append(Reply(headers=SSE_HEADERS, pieces=[page]))
    out = await run_once(settings_for(server, kind="anthropic"))
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.PROTOCOL
    assert "Proxy error" in out.error.message


async def test_truncated_json_in_a_chunk_is_a_protocol_error(server: LocalServer) -> None:
    broken = b'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Hel\n\n'
    server.replies.append(Reply(headers=SSE_HEADERS, pieces=[openai_chunk("A"), broken]))
    out = await run_once(settings_for(server))
    assert out.text == "A"
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.PROTOCOL
    assert "malformed JSON" in out.error.message


async def test_502_html_page_is_reduced_to_its_title(server: LocalServer) -> None:
    page = (
        b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
        b"</body>\r\n</html>\r\n"
    )
    server.replies.append(Reply(status=502, headers={"content-type": "text/html"}, pieces=[page]))
    out = await run_once(settings_for(server))
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.STATUS
    assert out.error.status == 502
    assert out.error.message == "502 Bad Gateway"
    assert out.error.retryable


def _rate_limited(headers: dict[str, str], message: str = "Rate limit reached") -> Reply:
    body = b'{"error":{"message":"%s","type":"requests","code":"rate_limit_exceeded"}}' % (
        message.encode()
    )
    return Reply(
        status=429,
        headers={"content-type": "application/json", **headers},
        pieces=[body],
        chunked=False,
    )


@pytest.mark.parametrize(
    ("headers", "message", "expected"),
    [
        ({"retry-after": "3"}, "Rate limit reached", 3.0),
        ({"retry-after-ms": "1500"}, "Rate limit reached", 1.5),
        ({}, "Rate limit reached. Please try again in 6.59s.", 6.59),
        ({}, "Please try again in 250ms", 0.25),
        ({}, "Please try again in 1m4.5s", 64.5),
        ({}, "Rate limit reached", None),
    ],
)
async def test_429_reads_every_retry_after_form(
    server: LocalServer, headers: dict[str, str], message: str, expected: float | None
) -> None:
    server.replies.append(_rate_limited(headers, message))
    out = await run_once(settings_for(server))
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.RATE_LIMIT
    assert out.error.retry_after_s == pytest.approx(expected)


async def test_429_retry_after_as_an_http_date(server: LocalServer) -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    server.replies.append(_rate_limited({"retry-after": when}))
    out = await run_once(settings_for(server))
    assert out.error is not None
    assert out.error.retry_after_s is not None
    assert 0.0 < out.error.retry_after_s <= 31.0


async def test_anthropic_overloaded_error_event_mid_stream(server: LocalServer) -> None:
    body, _ = fixture("anthropic_messages/ant_text_basic")
    head = body.split(b"event: content_block_stop")[0]
    error = (
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
        b'"message":"Overloaded"}}\n\n'
    )
    server.replies.append(Reply(headers=SSE_HEADERS, pieces=[head, error]))
    out = await run_once(settings_for(server, kind="anthropic"))
    assert out.text == "- Captain\n- Scoop"
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.OVERLOADED
    assert out.error.retryable


async def test_stream_without_content_or_finish_is_an_empty_response(server: LocalServer) -> None:
    first = b'data: {"id":"c1","choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n'
    server.replies.append(Reply(headers=SSE_HEADERS, pieces=[first, b"data: [DONE]\n\n"]))
    out = await run_once(settings_for(server))
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.EMPTY_RESPONSE
    assert out.error.retryable


async def _first_event_then(server: LocalServer, stop: str) -> None:
    server.replies.append(Reply(headers=SSE_HEADERS, pieces=[openai_chunk("Hel")], then="stall"))
    provider = make_provider(settings_for(server))
    request = LLMRequest(model="m", messages=(user_message("hi"),))
    first = asyncio.get_running_loop().create_future()

    async def consume() -> None:
        stream = provider.stream(request)
        async for event in stream:
            if not first.done():
                first.set_result(event)
                if stop == "aclose":
                    await stream.aclose()  # type: ignore[attr-defined]
                    return

    task = asyncio.create_task(consume())
    event: StreamEvent = await asyncio.wait_for(first, HANG_GUARD_S)
    assert isinstance(event, TextDelta) or event.type == "message_id"
    if stop == "cancel":
        task.cancel()
    expect = pytest.raises(asyncio.CancelledError) if stop == "cancel" else nullcontext()
    with expect:
        await asyncio.wait_for(task, HANG_GUARD_S)
    assert await server.wait_until_client_left()
    assert server.open_connections == 0
    await provider.aclose()


async def test_cancelling_the_consumer_closes_the_connection(server: LocalServer) -> None:
    await _first_event_then(server, "cancel")


async def test_closing_the_stream_closes_the_connection(server: LocalServer) -> None:
    await _first_event_then(server, "aclose")


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("openai", "openai_chat/oai_text_basic_no_usage"),
        ("anthropic", "anthropic_messages/ant_text_basic"),
    ],
)
async def test_connection_is_reused_after_a_complete_stream(
    server: LocalServer, kind: str, name: str
) -> None:
    body, meta = fixture(name)
    for _ in range(2):
        server.replies.append(
            Reply(headers=dict(meta["response_headers"]), pieces=split(body, 300))
        )
    provider = make_provider(settings_for(server, kind=kind))
    request = LLMRequest(model="m", messages=(user_message("hi"),))
    try:
        first = await collect(provider.stream(request))
        second = await collect(provider.stream(request))
    finally:
        await provider.aclose()
    assert first.text == second.text != ""
    assert len(server.requests) == 2
    assert server.connections_accepted == 1


async def test_server_stalling_after_done_still_finishes(server: LocalServer) -> None:
    server.replies.append(
        Reply(
            headers=SSE_HEADERS,
            pieces=[openai_chunk("Hi", finish="stop"), b"data: [DONE]\n\n"],
            then="stall",
        )
    )
    out = await run_once(settings_for(server))
    assert out.text == "Hi"
    assert out.finish is not None and out.finish.reason is FinishReason.END_TURN
    assert await server.wait_until_client_left()


async def test_error_event_in_plain_text_is_a_provider_error(server: LocalServer) -> None:
    server.replies.append(
        Reply(
            headers=SSE_HEADERS,
            pieces=[openai_chunk("Hi"), b"event: error\ndata: upstream went away\n\n"],
        )
    )
    out = await run_once(settings_for(server))
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.PROVIDER
    assert out.error.message == "upstream went away"


async def test_server_that_never_accepts_is_a_connect_timeout() -> None:
    # A listener whose accept queue is full drops new SYNs: the connect phase never completes.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    try:
        settings = ProviderSettings(
            kind="anthropic", model="m", base_url=f"http://127.0.0.1:{port}", connect_timeout_s=0.3
        )
        out = await run_once(settings)
    finally:
        for sock in [*fillers, listener]:
            sock.close()
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.TIMEOUT
    assert "connect" in out.error.message
