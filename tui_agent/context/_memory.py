"""Context memory: the session's history entries and how many tokens they are likely to cost.

The estimate (docs/loop-spec.md §3): the provider's own count for everything up to the last
assistant that reported usage (its input plus its output), plus about a quarter token per
character of what came after; with no usage anywhere, a quarter token per character of the
system prompt, the tool specs and every message. It is deliberately cheap: the loop asks it
before every step to decide whether to compact.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from tui_agent.context._fold import fold
from tui_agent.context._projection import project
from tui_agent.context._records import Record
from tui_agent.vocab import HistoryEntry, ImagePart, Message, TextPart, ThinkPart, ToolSpec

CHARS_PER_TOKEN = 4
# Providers bill an image by its pixels, which we do not decode; this is a typical
# 1024x1024 image under both providers' formulas.
IMAGE_TOKENS = 1_600


class ContextMemory:
    def __init__(self, entries: Iterable[HistoryEntry] = ()) -> None:
        self._entries: list[HistoryEntry] = list(entries)

    @classmethod
    def from_records(cls, records: Iterable[Record]) -> ContextMemory:
        return cls(fold(records))

    @property
    def entries(self) -> tuple[HistoryEntry, ...]:
        return tuple(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def append(self, entry: HistoryEntry) -> None:
        self._entries.append(entry)

    def extend(self, entries: Iterable[HistoryEntry]) -> None:
        self._entries.extend(entries)

    def replace(self, entries: Iterable[HistoryEntry]) -> None:
        self._entries = list(entries)

    def messages(self) -> list[Message]:
        """The history as the model is sent it (see `project`)."""
        return project(self._entries)

    def estimate_tokens(self, system: str = "", tools: Sequence[ToolSpec] = ()) -> int:
        return estimate_tokens(self._entries, system=system, tools=tools)


def estimate_tokens(
    entries: Sequence[HistoryEntry], *, system: str = "", tools: Sequence[ToolSpec] = ()
) -> int:
    for index in range(len(entries) - 1, -1, -1):
        usage = entries[index].meta.usage
        if entries[index].message.role == "assistant" and usage is not None and usage.total:
            later = sum(message_tokens(entry.message) for entry in entries[index + 1 :])
            return usage.total + later
    fixed = _tokens(len(system) + sum(_spec_chars(spec) for spec in tools))
    return fixed + sum(message_tokens(entry.message) for entry in entries)


def message_tokens(message: Message) -> int:
    chars = 0
    images = 0
    for part in message.content:
        if isinstance(part, TextPart):
            chars += len(part.text)
        elif isinstance(part, ThinkPart):
            chars += len(part.think) + len(part.signature or "") + len(part.encrypted or "")
        elif isinstance(part, ImagePart):
            images += 1
    for call in message.tool_calls:
        chars += len(call.name) + len(call.arguments)
    if message.role == "tool" and message.is_error:
        chars += 48  # the status line the projection adds
    return _tokens(chars) + images * IMAGE_TOKENS


def _spec_chars(spec: ToolSpec) -> int:
    return len(spec.name) + len(spec.description) + len(json.dumps(spec.parameters))


def _tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)
