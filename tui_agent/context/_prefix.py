"""Prefix watch: says when a request no longer starts with the previous request.

Providers cache prompts by prefix (Anthropic up to its `cache_control` breakpoints, OpenAI and
compatible servers automatically), so a request whose system prompt, tool table and messages
begin with the previous request's is served mostly from cache. The loop only ever appends to
what the model sees (reminders, notifications and steers join at the end, at the turn's drain
point), so the prefix breaks only where it must: a compaction replaces older messages with a
summary, plan mode changes the system prompt, an MCP server changes the tool table. Each break is
logged once, at debug level on the `tui_agent.context.prefix` logger, with its reason and the
first message that differs, so a person wondering why a step cost full price can see why.
"""

from __future__ import annotations

import logging

from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import LLMRequest

_log = logging.getLogger("tui_agent.context.prefix")


@dataclass(frozen=True)
class PrefixBreak:
    """Why a request does not start with the previous one; `kept` messages still match."""

    reason: str  # "system prompt changed" | "tool table changed" | "history rewritten"
    kept: int
    previous: int  # how many messages the previous request had


def prefix_break(previous: LLMRequest, request: LLMRequest) -> PrefixBreak | None:
    """None when `request` starts with all of `previous` (its system, tools and messages)."""
    old, new = previous.messages, request.messages
    kept = 0
    for before, after in zip(old, new, strict=False):
        if before != after:
            break
        kept += 1
    if request.system != previous.system:
        return PrefixBreak("system prompt changed", 0, len(old))
    if request.tools != previous.tools:
        return PrefixBreak("tool table changed", 0, len(old))
    if kept < len(old):
        return PrefixBreak("history rewritten", kept, len(old))
    return None


class PrefixWatch:
    """Remembers the last request of one conversation and logs each prefix break."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: LLMRequest | None = None

    def see(self, request: LLMRequest) -> PrefixBreak | None:
        last, self._last = self._last, request
        found = None if last is None else prefix_break(last, request)
        if found is not None:
            _log.debug(
                "prompt prefix broken (%s): %d of the previous %d messages kept; "
                "the provider's cache serves no more than that",
                found.reason,
                found.kept,
                found.previous,
            )
        return found
