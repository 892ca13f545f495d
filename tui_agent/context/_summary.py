"""The history entry that carries a compaction summary to the model.

Both compaction (which makes it) and the fold (which rebuilds it from a `compaction` record)
need the same entry, so the wording lives here once. It is a user message, marked clearly as
a summary of earlier conversation so the model neither answers it nor mistakes it for a new
request; its meta is a reminder under `SUMMARY_KEY` so the UI can show it as one.
"""

from __future__ import annotations

from tui_agent.vocab import EntryMeta, HistoryEntry, Message, TextPart

SUMMARY_KEY = "compaction.summary"

_HEAD = (
    "<system>The earlier part of this conversation was compacted to save context. "
    "Below is a summary of it, written by you. It is not a new request from the user.</system>"
)
_TAIL = (
    "<system>Continue from where the summary leaves off. What is still open follows verbatim "
    "(the user's latest request if it is not answered yet, and any unfinished tool exchange); "
    "a request that appears only in the summary has been dealt with, so do not redo it unless "
    "the user asks again.</system>"
)


def summary_text(summary: str) -> str:
    return f"{_HEAD}\n\n<summary>\n{summary.strip()}\n</summary>\n\n{_TAIL}"


def summary_entry(summary: str, *, created_at: float | None = None) -> HistoryEntry:
    return HistoryEntry(
        message=Message(role="user", content=(TextPart(text=summary_text(summary)),)),
        meta=EntryMeta(source="reminder", key=SUMMARY_KEY, created_at=created_at),
    )


def is_summary(entry: HistoryEntry) -> bool:
    return entry.meta.source == "reminder" and entry.meta.key == SUMMARY_KEY
