"""Tool specs the model sees and the results tools give back, with the seed's side channel.

`ToolResult` carries everything a tool may say: `output` for the model and the transcript,
`note` for the model only, `display` for the UI only (e.g. a unified diff), and the side
channel (`stop_turn`, `delivery`, `spill`, ...) that the loop acts on.
"""

from __future__ import annotations

from collections.abc import Mapping
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


ToolStatus = Literal["done", "failed", "denied", "aborted"]
"""How a call ended, the one word every view shows for it (the app's rows, the tools pane,
headless jsonl, exports, ACP): `done` (a result that is not an error), `failed` (an error
result, or the tool raised), `denied` (the user or the approval rules refused it before it
ran), `aborted` (cancelled: stopped while it ran, or before it started)."""

DENIED: Literal["denied"] = "denied"
ABORTED: Literal["aborted"] = "aborted"


def marked(result: ToolResult, status: Literal["denied", "aborted"], **extra: Any) -> ToolResult:
    """`result` marked in its `display` as `status`, which an error result alone cannot say."""
    display = {**(result.display or {}), **extra, "outcome": status}
    return result.model_copy(update={"display": display})


def tool_status(
    *, is_error: bool, display: Mapping[str, Any] | None = None, outcome: str | None = None
) -> ToolStatus:
    """The final status of a call from what its result says: its `display` mark (denied or
    aborted, see `marked`), the tool machine's `outcome` when known (`failed` when the tool
    raised, `aborted` when it was stopped) and whether the result is an error. The only rule:
    every view and record reads a call's status through it."""
    mark = (display or {}).get("outcome")
    if outcome == ABORTED or mark == ABORTED:
        return ABORTED
    if mark == DENIED:
        return DENIED
    if outcome == "failed" or is_error:
        return "failed"
    return "done"


class ToolUpdate(_Frozen):
    """Progress from a running tool (e.g. a chunk of shell output) for the UI."""

    text: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
