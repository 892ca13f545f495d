"""The message accumulator: one attempt's stream deltas become one assistant entry.

Text and thinking deltas extend the current part of their kind (a switch of kind opens a new
part, so the order the model produced is kept). Tool-call deltas are keyed by stream index: the
first delta of an index names the call, later ones append argument text, so arguments may be
split across any number of deltas. Ids go through the turn's `ToolCallIds`. Also here: the
empty-response rule (no content and no calls, or thinking only, is a failure) and salvage (an
aborted stream keeps its non-blank content, never its calls).
"""

from __future__ import annotations

from dataclasses import field

from tui_agent.kernel.ids import ToolCallIds
from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import (
    ContentPart,
    EntryMeta,
    Finish,
    HistoryEntry,
    LLMError,
    LLMErrorKind,
    Message,
    MessageIdReported,
    Source,
    StreamEvent,
    TextDelta,
    TextPart,
    ThinkDelta,
    ThinkPart,
    TokenUsage,
    ToolCall,
    ToolCallDelta,
    UsageReported,
    is_vacuous,
)


@dataclass
class _Part:
    think: bool
    chunks: list[str] = field(default_factory=list)
    signature: str | None = None
    encrypted: str | None = None

    def build(self) -> ContentPart:
        text = "".join(self.chunks)
        if self.think:
            return ThinkPart(think=text, signature=self.signature, encrypted=self.encrypted)
        return TextPart(text=text)


@dataclass
class _Call:
    id: str
    raw_id: str
    name: str
    chunks: list[str] = field(default_factory=list)

    def build(self) -> ToolCall:
        return ToolCall(
            id=self.id,
            name=self.name,
            arguments="".join(self.chunks),
            raw_id=self.raw_id if self.raw_id != self.id else None,
        )


class MessageAccumulator:
    def __init__(self, ids: ToolCallIds) -> None:
        self._ids = ids
        self._parts: list[_Part] = []
        self._calls: dict[int, _Call] = {}
        # A new call closes the current content part, as a provider's content block would.
        self._closed = False
        # The chunks of the text part a text delta extends, or None when it must open one.
        self._open_text: list[str] | None = None
        self.usage: TokenUsage | None = None
        self.finish: Finish | None = None
        self.message_id: str | None = None

    @property
    def has_output(self) -> bool:
        """Something the UI may already show: a discard must be announced."""
        return bool(self._parts or self._calls)

    def feed(self, event: StreamEvent) -> StreamEvent:
        """Take one delta; returns it as it should be forwarded (call ids normalised)."""
        if isinstance(event, TextDelta):
            self.add_text(event.text)
        elif isinstance(event, ThinkDelta):
            part = self._extend(True, event.text, fresh=event.encrypted is not None)
            if event.signature is not None:
                part.signature = event.signature
            if event.encrypted is not None:
                part.encrypted = event.encrypted
        elif isinstance(event, ToolCallDelta):
            return self._feed_call(event)
        elif isinstance(event, UsageReported):
            self.usage = event.usage if self.usage is None else self.usage.merge(event.usage)
        elif isinstance(event, MessageIdReported):
            self.message_id = event.message_id
        return event

    def add_text(self, text: str) -> None:
        """A text delta (the hot path of a stream: one list append once its part is open)."""
        chunks = self._open_text
        if chunks is None:
            self._extend(False, text)
        elif text:
            chunks.append(text)

    def _extend(self, think: bool, text: str, *, fresh: bool = False) -> _Part:
        parts = self._parts
        if parts and parts[-1].think is think and not fresh and not self._closed:
            part = parts[-1]
        else:
            part = _Part(think)
            parts.append(part)
            self._closed = False
        if text:
            part.chunks.append(text)
        self._open_text = None if think else part.chunks
        return part

    def _feed_call(self, event: ToolCallDelta) -> StreamEvent:
        call = self._calls.get(event.index)
        if call is None:
            raw_id = event.id or f"call_{event.index}"
            call = _Call(self._ids.claim(event.index, raw_id), raw_id, event.name or "")
            self._calls[event.index] = call
            self._closed = True
            self._open_text = None
        elif event.name and not call.name:
            call.name = event.name
        if event.arguments:
            call.chunks.append(event.arguments)
        if event.id is not None and event.id != call.id:
            return event.model_copy(update={"id": call.id})
        return event

    def message(self) -> Message:
        calls = tuple(self._calls[index].build() for index in sorted(self._calls))
        content = tuple(part.build() for part in self._parts)
        return Message(role="assistant", content=content, tool_calls=calls)

    def entry(self, model: str | None) -> HistoryEntry:
        return HistoryEntry(message=self.message(), meta=self._meta("llm", model))

    def salvage(self, model: str | None) -> HistoryEntry | None:
        """What an aborted attempt keeps: its non-blank content, no calls; None if nothing."""
        content = tuple(p for p in (part.build() for part in self._parts) if not is_vacuous(p))
        if not content:
            return None
        message = Message(role="assistant", content=content)
        return HistoryEntry(message=message, meta=self._meta("salvaged", model))

    def _meta(self, source: Source, model: str | None) -> EntryMeta:
        return EntryMeta(
            source=source,
            model=model,
            usage=self.usage,
            finish=self.finish,
            message_id=self.message_id,
        )


EMPTY_NO_CONTENT = "The API returned an empty response (no content, no tool calls)."
EMPTY_ONLY_THINKING = (
    "The API returned an empty response (only thinking content, no text and no tool calls)."
)


def empty_response_error(
    message: Message, finish: Finish | None, provider: str, model: str
) -> LLMError | None:
    """The failure an empty or thinking-only response stands for, or None if it has output."""
    if message.tool_calls:
        return None
    if any(isinstance(p, TextPart) and not is_vacuous(p) for p in message.content):
        return None
    if any(not isinstance(p, TextPart | ThinkPart) for p in message.content):
        return None  # media counts as content
    thinking = any(isinstance(p, ThinkPart) and not is_vacuous(p) for p in message.content)
    text = EMPTY_ONLY_THINKING if thinking else EMPTY_NO_CONTENT
    if finish is not None:
        raw = f" (raw: {finish.raw})" if finish.raw else ""
        text += f" Finish reason: {finish.reason.value}{raw}."
    text += f" Provider: {provider}, model: {model}"
    return LLMError(
        kind=LLMErrorKind.EMPTY_RESPONSE,
        message=text,
        finish_reason=finish.reason if finish is not None else None,
        provider=provider or None,
        model=model or None,
    )
