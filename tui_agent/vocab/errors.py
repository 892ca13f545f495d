"""Errors as values: LLM failures with a stable kind, loop errors with a stable dotted code.

The kind of an `LLMError` decides retrying (see `RETRYABLE_KINDS`); its `code` is
`llm.<kind>`. Messages never contain credentials: providers redact before building one.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tui_agent.vocab.finish import FinishReason


class ErrorCode(StrEnum):
    MAX_STEPS_EXCEEDED = "loop.max_steps_exceeded"
    GATE_STOPPED = "loop.gate_stopped"
    HANDLER_FAILED = "loop.handler_failed"
    INTERNAL = "loop.internal"
    PROVIDER_FILTERED = "loop.provider_filtered"
    BUDGET_EXCEEDED = "loop.budget_exceeded"  # a budget was spent: the step gate sent nothing
    EMPTY_RESPONSE = "llm.empty_response"
    RATE_LIMIT = "llm.rate_limit"
    OVERLOADED = "llm.overloaded"
    CONTEXT_OVERFLOW = "llm.context_overflow"
    REQUEST_TOO_LARGE = "llm.request_too_large"
    REQUEST_STRUCTURE = "llm.request_structure"
    AUTH = "llm.auth"
    QUOTA = "llm.quota"
    NOT_FOUND = "llm.not_found"
    STATUS = "llm.status"
    TIMEOUT = "llm.timeout"
    CONNECTION = "llm.connection"
    UNREACHABLE = "llm.unreachable"
    INCOMPLETE = "llm.incomplete"
    FILTERED = "llm.filtered"
    ABORT = "llm.abort"
    PROTOCOL = "llm.protocol"
    PROVIDER = "llm.provider"
    UNKNOWN = "llm.unknown"


class LLMErrorKind(StrEnum):
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    CONTEXT_OVERFLOW = "context_overflow"
    REQUEST_TOO_LARGE = "request_too_large"
    REQUEST_STRUCTURE = "request_structure"
    AUTH = "auth"
    QUOTA = "quota"
    NOT_FOUND = "not_found"
    STATUS = "status"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    UNREACHABLE = "unreachable"  # connection refused, host not found: retried only briefly
    INCOMPLETE = "incomplete"  # the stream stopped mid-answer: no finish reason, no terminator
    EMPTY_RESPONSE = "empty_response"
    FILTERED = "filtered"
    ABORT = "abort"
    PROTOCOL = "protocol"  # a malformed stream: truncated JSON, HTML where SSE was due
    PROVIDER = "provider"  # an error the provider reported inside the stream
    UNKNOWN = "unknown"


RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})

_ALWAYS_RETRYABLE = frozenset(
    {
        LLMErrorKind.RATE_LIMIT,
        LLMErrorKind.OVERLOADED,
        LLMErrorKind.TIMEOUT,
        LLMErrorKind.CONNECTION,
        LLMErrorKind.UNREACHABLE,
        LLMErrorKind.INCOMPLETE,
        LLMErrorKind.PROVIDER,
        LLMErrorKind.PROTOCOL,
    }
)


class LLMError(BaseModel):
    """One failed LLM attempt, classified."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    kind: LLMErrorKind
    message: str
    status: int | None = None
    retry_after_s: float | None = None
    finish_reason: FinishReason | None = None  # empty responses: why the stream ended
    provider: str | None = None
    model: str | None = None

    @property
    def code(self) -> str:
        return f"llm.{self.kind.value}"

    @property
    def retryable(self) -> bool:
        if self.kind in _ALWAYS_RETRYABLE:
            return True
        if self.kind is LLMErrorKind.EMPTY_RESPONSE:
            return self.finish_reason is not FinishReason.FILTERED
        if self.kind is LLMErrorKind.STATUS:
            return self.status in RETRYABLE_STATUS
        return False


class LoopError(BaseModel):
    """A failure that belongs to the loop itself (budgets, gates, handlers)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    code: str
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


def max_steps_exceeded(max_steps: int) -> LoopError:
    return LoopError(
        code=ErrorCode.MAX_STEPS_EXCEEDED,
        message=(
            f"Turn exceeded maxSteps={max_steps}. If the step budget is too small, raise "
            "max_steps_per_turn in config.toml or pass --max-steps."
        ),
        details={"max_steps": max_steps},
    )


TurnError = LLMError | LoopError
