"""Messages, content parts, tool calls and history entries: the words every layer shares.

A history entry is a message plus where it came from (`meta.source`); the model only ever sees
the message, the UI and the event log also read the meta. Models are frozen pydantic models so
they round-trip through JSON unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tui_agent.vocab.finish import Finish
from tui_agent.vocab.usage import TokenUsage


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class TextPart(_Frozen):
    type: Literal["text"] = "text"
    text: str


class ThinkPart(_Frozen):
    """Reasoning. `signature` (Anthropic) and `encrypted` (redacted thinking) are echoed back."""

    type: Literal["think"] = "think"
    think: str
    signature: str | None = None
    encrypted: str | None = None


class ImagePart(_Frozen):
    type: Literal["image"] = "image"
    media_type: str
    data: str  # base64


ContentPart = Annotated[TextPart | ThinkPart | ImagePart, Field(discriminator="type")]


def is_vacuous(part: TextPart | ThinkPart | ImagePart) -> bool:
    """Blank text, or a think part with a blank body and nothing encrypted. Media never is."""
    if isinstance(part, TextPart):
        return not part.text.strip()
    if isinstance(part, ThinkPart):
        return not part.think.strip() and not part.encrypted and not part.signature
    return False


class ToolCall(_Frozen):
    """One call the model asked for. `arguments` is the raw JSON text as the model sent it."""

    id: str
    name: str
    arguments: str = ""
    raw_id: str | None = None  # the provider's id when the normaliser had to rename it
    extras: dict[str, Any] = Field(default_factory=dict)


Role = Literal["system", "user", "assistant", "tool"]


class Message(_Frozen):
    role: Role
    content: tuple[ContentPart, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()  # assistant only
    tool_call_id: str | None = None  # tool only
    is_error: bool = False  # tool only

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextPart))

    @property
    def thinking(self) -> str:
        return "".join(p.think for p in self.content if isinstance(p, ThinkPart))


def user_message(text: str) -> Message:
    return Message(role="user", content=(TextPart(text=text),))


def system_message(text: str) -> Message:
    return Message(role="system", content=(TextPart(text=text),))


Source = Literal["input", "notify", "reminder", "llm", "tool", "salvaged", "async-tool"]


class PromptDraft(_Frozen):
    """A prompt as the person typed it: `@` mentions as typed, each `[pasted #N: … lines]` chip
    as a chip with the pasted text behind it in `pastes` (what a rewind puts back)."""

    text: str
    pastes: dict[int, str] = Field(default_factory=dict)


class EntryMeta(_Frozen):
    source: Source
    key: str | None = None  # reminders: one per key
    prompt_id: str | None = None
    prompt_ids: tuple[str, ...] = ()  # a merged steer names every prompt it took
    in_turn: bool = False  # a steer that joined a running turn
    created_at: float | None = None
    model: str | None = None
    usage: TokenUsage | None = None
    finish: Finish | None = None
    message_id: str | None = None
    note: str | None = None  # tool results: model-only addendum
    draft: PromptDraft | None = None  # input: the typed form, when it differs from the message

    @property
    def all_prompt_ids(self) -> tuple[str, ...]:
        """Every prompt behind the entry: a merged steer's several, or the one prompt's."""
        return self.prompt_ids or ((self.prompt_id,) if self.prompt_id else ())


class HistoryEntry(_Frozen):
    message: Message
    meta: EntryMeta
