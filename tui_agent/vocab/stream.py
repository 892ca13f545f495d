"""Stream events: what one LLM attempt yields, in order, from any provider.

A provider yields `RequestSent` once the request is on the wire, then deltas, usage and a
finish, and nothing after a `StreamFailed` (failures are values, not exceptions). Tool-call
deltas are keyed by `index`; the first delta of an index carries the id and name, later ones
append argument text.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from tui_agent.vocab.errors import LLMError
from tui_agent.vocab.finish import Finish
from tui_agent.vocab.usage import TokenUsage


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class RequestSent(_Event):
    type: Literal["request.sent"] = "request.sent"


class TextDelta(_Event):
    type: Literal["text.delta"] = "text.delta"
    text: str


class ThinkDelta(_Event):
    type: Literal["think.delta"] = "think.delta"
    text: str = ""
    signature: str | None = None
    encrypted: str | None = None  # redacted thinking: opaque, echoed back whole


class ToolCallDelta(_Event):
    type: Literal["tool_call.delta"] = "tool_call.delta"
    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


class UsageReported(_Event):
    type: Literal["usage"] = "usage"
    usage: TokenUsage


class MessageIdReported(_Event):
    type: Literal["message_id"] = "message_id"
    message_id: str


class Finished(_Event):
    type: Literal["finish"] = "finish"
    finish: Finish


class StreamFailed(_Event):
    type: Literal["failed"] = "failed"
    error: LLMError


StreamEvent = Annotated[
    RequestSent
    | TextDelta
    | ThinkDelta
    | ToolCallDelta
    | UsageReported
    | MessageIdReported
    | Finished
    | StreamFailed,
    Field(discriminator="type"),
]
