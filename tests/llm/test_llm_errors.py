"""Error classification by status and the provider's words (docs/loop-spec.md §8)."""

from __future__ import annotations

import pytest

from tui_agent.llm._errors import ErrorContext, classify_status, classify_stream_error
from tui_agent.vocab import LLMErrorKind

CTX = ErrorContext(provider="openai", model="m", secrets=("sk-live-abcdefghijklmnop",))
K = LLMErrorKind


@pytest.mark.parametrize(
    ("status", "body", "kind", "retryable"),
    [
        (
            529,
            '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
            K.OVERLOADED,
            True,
        ),
        (503, '{"error":{"message":"The engine is currently overloaded"}}', K.OVERLOADED, True),
        (500, '{"error":{"message":"Internal error"}}', K.STATUS, True),
        (503, "", K.STATUS, True),
        (408, '{"error":{"message":"Request timeout"}}', K.STATUS, True),
        (418, '{"error":{"message":"I am a teapot"}}', K.STATUS, False),
        (
            413,
            '{"error":{"type":"request_too_large","message":"Request exceeds 32 MB"}}',
            K.REQUEST_TOO_LARGE,
            False,
        ),
        (
            413,
            '{"error":{"message":"input is too long for this model"}}',
            K.CONTEXT_OVERFLOW,
            False,
        ),
        (402, '{"error":{"message":"Payment required"}}', K.QUOTA, False),
        (
            400,
            '{"type":"error","error":{"type":"invalid_request_error",'
            '"message":"Your credit balance is too low to access the Anthropic API."}}',
            K.QUOTA,
            False,
        ),
        (403, '{"error":{"type":"permission_error","message":"not allowed"}}', K.AUTH, False),
        (
            422,
            '{"detail":"roles must alternate between user and assistant"}',
            K.REQUEST_STRUCTURE,
            False,
        ),
        (
            400,
            '{"error":{"message":"messages with role \'tool\' must be a response to a '
            "preceding message with 'tool_calls'\"}}",
            K.REQUEST_STRUCTURE,
            False,
        ),
        (400, '{"error":{"message":"Invalid value for temperature"}}', K.STATUS, False),
        (404, "<html><title>404 Not Found</title></html>", K.NOT_FOUND, False),
    ],
)
def test_status_and_words_decide_the_kind(
    status: int, body: str, kind: LLMErrorKind, retryable: bool
) -> None:
    error = classify_status(CTX, status, {}, body)
    assert error.kind is kind
    assert error.status == status
    assert error.retryable is retryable


def test_empty_body_still_says_what_happened() -> None:
    assert classify_status(CTX, 503, {}, "  ").message == "HTTP 503 with an empty body"


def test_long_messages_are_clipped() -> None:
    error = classify_status(CTX, 400, {}, '{"error":{"message":"%s"}}' % ("x" * 5000))
    assert len(error.message) == 1000


def test_retry_after_in_the_past_is_zero() -> None:
    headers = {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}
    assert classify_status(CTX, 429, headers, "{}").retry_after_s == 0.0


def test_retry_after_ms_wins_over_retry_after() -> None:
    headers = {"retry-after-ms": "250", "retry-after": "9"}
    assert classify_status(CTX, 429, headers, "{}").retry_after_s == pytest.approx(0.25)


def test_configured_key_and_key_shaped_text_are_redacted() -> None:
    body = '{"error":{"message":"key sk-live-abcdefghijklmnop and sk-proj-ZZZZZZZZZZZZ9 refused"}}'
    error = classify_status(CTX, 401, {}, body)
    assert "abcdefghijklmnop" not in error.message
    assert "ZZZZZZZZZZZZ9" not in error.message
    assert error.kind is K.AUTH


def test_stream_error_with_rate_limit_words_is_a_rate_limit() -> None:
    payload = {"error": {"type": "rate_limit_error", "message": "slow down, try again in 2s"}}
    error = classify_stream_error(CTX, payload)
    assert error.kind is K.RATE_LIMIT
    assert error.retry_after_s == pytest.approx(2.0)


def test_stream_error_without_known_words_is_a_provider_error() -> None:
    error = classify_stream_error(CTX, {"error": {"type": "api_error", "message": "Internal"}})
    assert error.kind is K.PROVIDER
    assert error.retryable
