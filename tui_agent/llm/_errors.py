"""Error classification: HTTP statuses, error bodies, stream error events and transport
failures become `LLMError` values with a stable kind.

The table follows docs/loop-spec.md §8 (status first, then the provider's words), with
three refinements the recorded fixtures ask for: a 429 whose code or text says the account is
out of quota is `quota` (retrying cannot help), a 429 that says "overloaded" is `overloaded`,
and 401/403/404 have their own kinds. A connection that cannot be made at all (refused, unknown
host) is `unreachable`, which retries only briefly, and a stream that ends mid-answer is
`incomplete`. Messages are the provider's own words (HTML reduced to its `<title>`), cut to a
readable length and always passed through `redact` so a key that a server echoes never
reaches an error, a log or the screen.
"""

from __future__ import annotations

import email.utils
import html
import json
import re
import socket
import time
from collections.abc import Mapping
from typing import NamedTuple

import httpx

from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import LLMError, LLMErrorKind

_MAX_MESSAGE_CHARS = 1000

# Patterns a failed request's message is read with: compiled on first use (by `re`'s own
# cache), since a run whose requests all succeed never needs them; `(?i)`: case-insensitive.
_CONTEXT_OVERFLOW = (
    r"(?i)context[ _]length|context[ _]window|maximum context|prompt is too long|"
    r"reduce the length of the messages|too many tokens|input is too long|"
    r"exceeds? the (?:model'?s? )?(?:maximum )?(?:context|token limit)"
)
_OVERLOADED = r"(?i)overload"
_QUOTA = (
    r"(?i)exceeded your current quota|insufficient[_ ]quota|insufficient[_ ]balance|"
    r"credit balance is too low|billing_(?:hard_limit|not_active)|quota_exceeded_billing"
)
_STRUCTURE = (
    r"(?i)roles must alternate|must alternate|tool_use ids must be unique|tool_use_id|"
    r"tool_call_id|tool_result|tool_calls.*must be followed|must be a response to a preceding|"
    r"messages with role 'tool'"
)
_TRY_AGAIN = (
    r"(?i)try again in\s+(?:(?P<m>\d+)m)?(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|sec|seconds?)?\b"
)
_TITLE = r"(?is)<title[^>]*>(.*?)</title>"
_SECRETISH = r"\b(sk-[A-Za-z0-9_\-]{8,})"


@dataclass(frozen=True)
class ErrorContext:
    """What every classified error carries, and the secrets it must never show."""

    provider: str
    model: str
    secrets: tuple[str, ...] = ()
    connect_timeout_s: float = 10.0
    idle_timeout_s: float = 120.0

    def error(
        self,
        kind: LLMErrorKind,
        message: str,
        *,
        status: int | None = None,
        retry_after_s: float | None = None,
    ) -> LLMError:
        return LLMError(
            kind=kind,
            message=redact(message, self.secrets),
            status=status,
            retry_after_s=retry_after_s,
            provider=self.provider,
            model=self.model,
        )


class StreamFailure(Exception):
    """Raised inside a provider, caught at its edge and yielded as `StreamFailed`."""

    def __init__(self, error: LLMError) -> None:
        super().__init__(error.message)
        self.error = error


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """Remove every configured secret, and anything shaped like an `sk-` key, from a text."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return re.sub(_SECRETISH, "sk-[redacted]", text)


def html_title(text: str) -> str | None:
    match = re.search(_TITLE, text)
    if match is None:
        return None
    return " ".join(html.unescape(match.group(1)).split()) or None


def _looks_like_html(text: str) -> bool:
    head = text.lstrip()[:200].lower()
    return head.startswith("<!doctype html") or head.startswith("<html") or "<head" in head


class _Body(NamedTuple):
    """What a provider said in an error body: its message and machine-readable type/code.
    A named tuple: built at import on every start, read only when a request fails."""

    message: str
    type: str = ""
    code: str = ""
    status: int | None = None  # a status the body names (mid-stream errors carry one)


def _text(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _from_payload(payload: object) -> _Body | None:
    """Read the error envelopes we know: `{"error": {...}}`, `{"error": "..."}`, flat, detail."""
    if not isinstance(payload, dict):
        return None
    inner = payload.get("error")
    if isinstance(inner, str) and inner:
        return _Body(message=inner)
    source: dict[str, object] = inner if isinstance(inner, dict) else payload
    message = _text(source.get("message") or source.get("detail") or payload.get("detail"))
    if not message:
        return None
    metadata = source.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("raw"), str):
        # OpenRouter puts the upstream provider's own words here; they say what happened.
        message = f"{message}: {metadata['raw']}"
    named = source.get("status_code")
    status = named if isinstance(named, int) else None
    code = source.get("code")
    if status is None and isinstance(code, int) and 400 <= code < 600:
        status = code
    return _Body(message=message, type=_text(source.get("type")), code=_text(code), status=status)


def _read_body(text: str, status: int | None) -> _Body:
    stripped = text.strip()
    if not stripped:
        return _Body(message=f"HTTP {status} with an empty body" if status else "empty body")
    try:
        parsed = _from_payload(json.loads(stripped))
    except ValueError:
        parsed = None
    if parsed is not None:
        return parsed
    if _looks_like_html(stripped):
        title = html_title(stripped)
        fallback = f"HTTP {status} with an HTML page" if status else "an HTML page"
        return _Body(message=title or fallback)
    return _Body(message=" ".join(stripped.split()))


def _kind_for(status: int | None, body: _Body) -> LLMErrorKind | None:
    """Section 8's table with our refinements; None when the status says nothing special."""
    words = f"{body.type} {body.code} {body.message}"
    if re.search(_QUOTA, words) or status == 402:
        return LLMErrorKind.QUOTA
    if status in (401, 403) or body.type in ("authentication_error", "permission_error"):
        return LLMErrorKind.AUTH
    if status == 429 or body.type == "rate_limit_error":
        return LLMErrorKind.OVERLOADED if re.search(_OVERLOADED, words) else LLMErrorKind.RATE_LIMIT
    # The Responses API answers an unknown model with 400, its code says what it is.
    if status == 404 or body.type == "not_found_error" or body.code == "model_not_found":
        return LLMErrorKind.NOT_FOUND
    if status in (400, 413, 422, None) and re.search(_CONTEXT_OVERFLOW, words):
        return LLMErrorKind.CONTEXT_OVERFLOW
    if status == 413 or body.type == "request_too_large":
        return LLMErrorKind.REQUEST_TOO_LARGE
    if status == 529 or body.type == "overloaded_error":
        return LLMErrorKind.OVERLOADED
    if status in (500, 503) and re.search(_OVERLOADED, words):
        return LLMErrorKind.OVERLOADED
    if status in (400, 422, None) and re.search(_STRUCTURE, words):
        return LLMErrorKind.REQUEST_STRUCTURE
    return None


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE_CHARS else text[: _MAX_MESSAGE_CHARS - 1] + "…"


def retry_after_s(headers: Mapping[str, str], message: str = "") -> float | None:
    """`retry-after-ms`, then `Retry-After` (seconds or an HTTP date), then "try again in Xs"."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw:
        try:
            return max(float(raw), 0.0)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(raw)
            except (TypeError, ValueError):
                when = None
            if when is not None:
                return max(when.timestamp() - time.time(), 0.0)
    match = re.search(_TRY_AGAIN, message)
    if match is None:
        return None
    seconds = float(match.group("n"))
    unit = (match.group("unit") or "s").lower()
    if unit == "ms":
        seconds /= 1000.0
    if match.group("m"):
        seconds += 60.0 * int(match.group("m"))
    return seconds


def classify_status(
    ctx: ErrorContext, status: int, headers: Mapping[str, str], body_text: str
) -> LLMError:
    """A response with an error status, classified from its status, headers and body."""
    body = _read_body(body_text, status)
    kind = _kind_for(status, body) or LLMErrorKind.STATUS
    return ctx.error(
        kind,
        _clip(body.message),
        status=status,
        retry_after_s=retry_after_s(headers, body.message),
    )


def classify_unexpected_body(ctx: ErrorContext, status: int, body_text: str) -> LLMError:
    """A success status whose body is not an event stream: an error object, or an HTML page."""
    body = _read_body(body_text, None)
    stripped = body_text.strip()
    if _is_error_json(stripped):
        kind = _kind_for(body.status, body) or LLMErrorKind.PROVIDER
        return ctx.error(
            kind,
            _clip(body.message),
            status=body.status or status,
            retry_after_s=retry_after_s({}, body.message),
        )
    what = "an HTML page" if _looks_like_html(stripped) else "a body that is not an event stream"
    return ctx.error(
        LLMErrorKind.PROTOCOL,
        _clip(f"expected an event stream, got {what}: {body.message}"),
        status=status,
    )


def _is_error_json(text: str) -> bool:
    try:
        payload = json.loads(text)
    except ValueError:
        return False
    return isinstance(payload, dict) and ("error" in payload or payload.get("object") == "error")


def classify_stream_error(ctx: ErrorContext, payload: object) -> LLMError:
    """An error the provider reported inside a 200 stream: a kind by its words, else provider."""
    body = _from_payload(payload) or _Body(message=_clip(json.dumps(payload)))
    kind = _kind_for(body.status, body)
    if kind in (None, LLMErrorKind.STATUS, LLMErrorKind.NOT_FOUND):
        kind = LLMErrorKind.PROVIDER
    return ctx.error(
        kind,
        _clip(body.message),
        status=body.status,
        retry_after_s=retry_after_s({}, body.message),
    )


def classify_transport(ctx: ErrorContext, exc: httpx.HTTPError) -> LLMError:
    """httpx failures: timeouts by phase, everything on the socket as connection."""
    if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
        return ctx.error(
            LLMErrorKind.TIMEOUT, f"could not connect within {ctx.connect_timeout_s:g} s"
        )
    if isinstance(exc, httpx.ReadTimeout):
        return ctx.error(
            LLMErrorKind.TIMEOUT,
            f"the server sent no data for {ctx.idle_timeout_s:g} s (idle timeout)",
        )
    if isinstance(exc, httpx.TimeoutException):
        return ctx.error(LLMErrorKind.TIMEOUT, f"timed out: {type(exc).__name__}")
    detail = str(exc) or type(exc).__name__
    unreachable = _unreachable(exc)
    if unreachable is not None:
        return ctx.error(LLMErrorKind.UNREACHABLE, _clip(f"cannot reach the server: {unreachable}"))
    if isinstance(exc, httpx.TransportError):
        return ctx.error(LLMErrorKind.CONNECTION, _clip(f"connection failed: {detail}"))
    return ctx.error(LLMErrorKind.PROTOCOL, _clip(f"HTTP error: {detail}"))


def _unreachable(exc: BaseException) -> str | None:
    """Why no connection could be made at all (refused, or the host has no address), or None.

    These will not mend in seconds the way a dropped connection can, so they retry briefly."""
    if not isinstance(exc, httpx.ConnectError):
        return None
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, socket.gaierror):
            return f"host not found ({cause.strerror or cause})"
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        cause = cause.__cause__ or cause.__context__
    return None


def protocol_error(ctx: ErrorContext, message: str) -> StreamFailure:
    return StreamFailure(ctx.error(LLMErrorKind.PROTOCOL, _clip(message)))


def incomplete_stream(ctx: ErrorContext, missing: str) -> StreamFailure:
    """A stream that ended (cleanly, as far as the socket knows) before the answer did."""
    return StreamFailure(
        ctx.error(
            LLMErrorKind.INCOMPLETE,
            f"the stream stopped before the answer was complete ({missing})",
        )
    )
