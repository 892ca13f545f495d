"""Tool specs the model sees and the results tools give back, with the seed's side channel.

`ToolResult` carries everything a tool may say: `output` for the model and the transcript,
`note` for the model only, `display` for the UI only (e.g. a unified diff), and the side
channel (`stop_turn`, `delivery`, `spill`, ...) that the loop acts on.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tui_agent.vocab.messages import ContentPart, Message, TextPart


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class ToolSpec(_Frozen):
    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments object


class Delivery(_Frozen):
    """A user message a tool hands back with its result; the loop steers it into the turn."""

    kind: Literal["steer"] = "steer"
    message: Message


class Spill(_Frozen):
    output_path: str
    total_chars: int


class ToolResult(_Frozen):
    output: str | tuple[ContentPart, ...] = ""
    is_error: bool = False
    stop_turn: bool = False
    stop_turn_reason: str | None = None
    truncated: bool = False
    note: str | None = None
    delivery: Delivery | None = None
    spill: Spill | None = None
    spill_exempt: bool = False
    stop_batch_after_this: bool = False
    display: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        if isinstance(self.output, str):
            return self.output
        return "\n".join(p.text for p in self.output if isinstance(p, TextPart))


def error_result(text: str) -> ToolResult:
    return ToolResult(output=text, is_error=True)


class ToolUpdate(_Frozen):
    """Progress from a running tool (e.g. a chunk of shell output) for the UI."""

    text: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
