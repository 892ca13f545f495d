"""Token usage, merged field by field as a stream reports it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class TokenUsage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    input_other: int = 0
    output: int = 0
    input_cache_read: int = 0
    input_cache_creation: int = 0

    @property
    def input(self) -> int:
        return self.input_other + self.input_cache_read + self.input_cache_creation

    @property
    def total(self) -> int:
        return self.input + self.output

    def merge(self, later: TokenUsage) -> TokenUsage:
        """A later report wins for every field it sets (non-zero); zero fields keep ours."""
        return TokenUsage(
            input_other=later.input_other or self.input_other,
            output=later.output or self.output,
            input_cache_read=later.input_cache_read or self.input_cache_read,
            input_cache_creation=later.input_cache_creation or self.input_cache_creation,
        )

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input_other=self.input_other + other.input_other,
            output=self.output + other.output,
            input_cache_read=self.input_cache_read + other.input_cache_read,
            input_cache_creation=self.input_cache_creation + other.input_cache_creation,
        )
