"""Streams that end too early, keep a dead connection warm, or have shapes nobody expected.

Each ends in the right error value: an answer cut off without a finish reason or terminator
is `incomplete` (retried, never taken as complete), keep-alive comments do not reset the idle
timeout, and any JSON shape a parser does not expect is a `protocol` error naming the event.
A property test feeds the parsers arbitrary JSON to find shapes the examples missed.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.llm.helpers import SSE_HEADERS, openai_chunk, run_once, settings_for
from tests.llm.server import LocalServer, Reply
from tui_agent.llm._anthropic import AnthropicStreamParser
from tui_agent.llm._errors import ErrorContext, StreamFailure
from tui_agent.llm._http_provider import StreamParser, parse_event
from tui_agent.llm._openai import OpenAIStreamParser
from tui_agent.llm._sse import ServerSentEvent
from tui_agent.vocab import FinishReason, LLMErrorKind


def anthropic_event(kind: str, **fields: Any) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n".encode()


ANTHROPIC_START = anthropic_event("message_start", message={"id": "msg_1", "usage": {}})
ANTHROPIC_TEXT = [
    anthropic_event("content_block_start", index=0, content_block={"type": "text", "text": ""}),
    anthropic_event("content_block_delta", index=0, delta={"type": "text_delta", "text": "Hel"}),
]


async def test_openai_stream_cut_off_without_finish_or_done_is_incomplete(
    server: LocalServer,
) -> None:
    server.replies.append(Reply(headers=SSE_HEADERS, pieces=[openai_chunk("Hel")]))
    out = await run_once(settings_for(server))
    assert out.text == "Hel"
    assert out.finish is None and out.error is not None
    assert out.error.kind is LLMErrorKind.INCOMPLETE
    assert out.error.code == "llm.incomplete"
    assert "no finish reason and no [DONE]" in out.error.message
    assert out.error.retryable


async def test_anthropic_stream_cut_off_without_stop_reason_or_message_stop_is_incomplete(
    server: LocalServer,
) -> None:
    server.replies.append(Reply(headers=SSE_HEADERS, pieces=[ANTHROPIC_START, *ANTHROPIC_TEXT]))
    out = await run_once(settings_for(server, kind="anthropic"))
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.INCOMPLETE
    assert "no stop reason and no message_stop" in out.error.message


async def test_done_without_a_finish_reason_is_a_complete_answer(server: LocalServer) -> None:
    server.replies.append(
        Reply(headers=SSE_HEADERS, pieces=[openai_chunk("Hello"), b"data: [DONE]\n\n"])
    )
    out = await run_once(settings_for(server))
    assert out.finish is not None and out.finish.reason is FinishReason.END_TURN


async def test_a_finish_reason_without_done_is_a_complete_answer(server: LocalServer) -> None:
    server.replies.append(
        Reply(headers=SSE_HEADERS, pieces=[openai_chunk("Hello"), openai_chunk(finish="stop")])
    )
    out = await run_once(settings_for(server))
    assert out.finish is not None and out.finish.raw == "stop"


async def test_message_stop_without_a_stop_reason_is_a_complete_answer(
    server: LocalServer,
) -> None:
    pieces = [ANTHROPIC_START, *ANTHROPIC_TEXT, anthropic_event("message_stop")]
    server.replies.append(Reply(headers=SSE_HEADERS, pieces=pieces))
    out = await run_once(settings_for(server, kind="anthropic"))
    assert out.finish is not None and out.finish.reason is FinishReason.END_TURN


async def test_keep_alive_comments_do_not_hold_a_dead_stream_open(server: LocalServer) -> None:
    # A comment every 50 ms for far longer than the hang guard: only the idle timeout on data
    # can end this attempt in time.
    comments = [b": keep-alive\n\n"] * 2000
    server.replies.append(
        Reply(headers=SSE_HEADERS, pieces=[openai_chunk("Hel"), *comments], piece_delay_s=0.05)
    )
    out = await run_once(settings_for(server, idle_timeout_s=0.5))
    assert out.text == "Hel"
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.TIMEOUT
    assert out.error.message == "the server sent no data for 0.5 s (idle timeout)"
    assert await server.wait_until_client_left()


async def test_choices_holding_null_is_a_protocol_error(server: LocalServer) -> None:
    bad = b'data: {"id":"c1","choices":[null]}\n\n'
    server.replies.append(Reply(headers=SSE_HEADERS, pieces=[openai_chunk("A"), bad]))
    out = await run_once(settings_for(server))
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.PROTOCOL
    assert out.error.message.startswith("a stream event has an unexpected shape")
    assert '{"id":"c1","choices":[null]}' in out.error.message


async def test_anthropic_delta_that_is_a_list_is_a_protocol_error(server: LocalServer) -> None:
    bad = anthropic_event("content_block_delta", index=0, delta=["text_delta", "Hel"])
    server.replies.append(Reply(headers=SSE_HEADERS, pieces=[ANTHROPIC_START, bad]))
    out = await run_once(settings_for(server, kind="anthropic"))
    assert out.error is not None
    assert out.error.kind is LLMErrorKind.PROTOCOL
    assert "unexpected shape" in out.error.message


# -- a little fuzzing -----------------------------------------------------------------------------

_KEYS = [
    "index",
    "id",
    "type",
    "delta",
    "choices",
    "content",
    "text",
    "tool_calls",
    "function",
    "arguments",
    "name",
    "finish_reason",
    "usage",
    "message",
    "content_block",
    "stop_reason",
    "partial_json",
    "thinking",
    "signature",
    "error",
    "reasoning",
    "reasoning_details",
    "refusal",
    "x_groq",
    "input",
    "data",
    "prompt_tokens",
    "prompt_tokens_details",
]
_SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4) | st.floats(-1, 1)
_FIELDS = st.sampled_from(_KEYS)


def _nested(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return _SCALARS | st.lists(inner, max_size=3) | st.dictionaries(_FIELDS, inner, max_size=4)


# Four levels by hand rather than `st.recursive`, whose leaf budget made Hypothesis report
# flaky generation here when the strategy appeared several times in one example.
_JSON = _nested(_nested(_nested(_nested(_SCALARS))))
_ANTHROPIC_TYPES = st.sampled_from(
    [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
    ]
)


def _feed_all(parser: StreamParser, payloads: list[Any]) -> None:
    """Only events or a `StreamFailure` may come out, whatever the payloads."""
    ctx = ErrorContext("fuzz", "m")
    try:
        for payload in payloads:
            parse_event(parser, ServerSentEvent(None, json.dumps(payload)), ctx)
        parser.end()
    except StreamFailure:
        pass


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_JSON, max_size=4))
def test_openai_parser_turns_any_json_into_events_or_a_failure(payloads: list[Any]) -> None:
    # Every other payload goes inside `choices`, where most of the parser's reading happens.
    wrapped = [{"choices": [p]} if i % 2 else p for i, p in enumerate(payloads)]
    _feed_all(OpenAIStreamParser(ErrorContext("fuzz", "m")), wrapped)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_ANTHROPIC_TYPES, st.dictionaries(_FIELDS, _JSON)), max_size=4))
def test_anthropic_parser_turns_any_json_into_events_or_a_failure(
    items: list[tuple[str, dict[str, Any]]],
) -> None:
    _feed_all(
        AnthropicStreamParser(ErrorContext("fuzz", "m")),
        [{**fields, "type": kind} for kind, fields in items],
    )
