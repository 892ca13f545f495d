"""Tool specs the model sees and the results tools give back, with the seed's side channel.

`ToolResult` carries everything a tool may say: `output` for the model and the transcript,
`note` for the model only, `display` for the UI only (e.g. a unified diff), and the side
channel (`stop_turn`, `delivery`, `spill`, ...) that the loop acts on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab.messages import ContentPart, Message, TextPart


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


# What a client shows a call as (the Agent Client Protocol's tool kinds).
ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]


class FileChange(_Frozen):
    """What an edit or a write would do to one file, before it runs: its whole text before
    (None: the file does not exist yet) and after. The approval question carries it, so a
    front end that shows diffs itself (an editor over ACP) can show it before the write."""

    path: str  # absolute
    before: str | None
    after: str


@dataclass(frozen=True)
class TerminalOutput:
    """What a command printed in a front end's terminal (`tools.EditorTerminal`), and how it
    ended."""

    text: str
    truncated: bool  # the editor kept only the end of it
    exit_code: int | None  # None while running, or when a signal ended it
    signal: str | None  # the signal that ended it (`SIGKILL`)


@dataclass(frozen=True)
class ToolFacts:
    """How a tool is presented, declared by the tool class itself (`Tool.facts`), so that adding
    a tool touches its own module and the registry, not every front end: its kind for a client,
    the `verb` and `primary_arg` of its title (`Read src/app.py`; a verb without an argument is
    the whole title), and the `advice` the system prompt gives the model about it. A tool that
    declares none (an MCP server's) gets these defaults: kind "other", its name as the title."""

    kind: ToolKind = "other"
    verb: str = ""
    primary_arg: str | None = None
    advice: str = ""

    def title(self, name: str, args: Mapping[str, Any]) -> str:
        """A short human title, as a client lists it: `Read src/app.py`, `Run make test`."""
        value = args.get(self.primary_arg) if self.primary_arg else None
        if self.verb and isinstance(value, str):
            first_line = value.splitlines()[0] if value else ""
            return f"{self.verb} {first_line}"[:120]
        if self.verb and self.primary_arg is None:
            return self.verb
        return name


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
