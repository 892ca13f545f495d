"""Normalised finish reasons, keeping the provider's raw value beside them."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class FinishReason(StrEnum):
    END_TURN = "end_turn"
    TOOL_USE = "tool_use"
    MAX_TOKENS = "max_tokens"
    STOP_SEQUENCE = "stop_sequence"
    FILTERED = "filtered"
    REFUSAL = "refusal"
    OTHER = "other"
    INTERRUPTED = "interrupted"
    ERROR = "error"


class Finish(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    reason: FinishReason
    raw: str | None = None
