"""Compaction: replacing older history with a summary the same model writes, keeping the task.

The history is split in two. Kept verbatim: the tail from the last assistant on when it made
tool calls (the unfinished exchange the model is about to answer), or the messages after the
last final answer otherwise, and the last user request if it is still open (no final answer
came after it). An answered request lives in the summary only: kept verbatim after it, it would
read as a request to do again. Everything else is rendered as a plain
transcript (tool calls as text, long outputs cut in the middle, the oldest non-request
messages dropped first if it would not fit the window) and summarised under instructions that
keep the user's requests, decisions, files touched, commands and open items. The new history
is the summary message (see `_summary`) followed by the kept entries. Failures are values: a
`CompactionFailed` leaves the caller's history untouched.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from tui_agent.context._memory import ContextMemory, estimate_tokens
from tui_agent.context._records import Compaction
from tui_agent.context._summary import is_summary, summary_entry
from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import Finished as StreamFinished
from tui_agent.vocab import (
    FinishReason,
    HistoryEntry,
    LLMError,
    LLMRequest,
    StreamEvent,
    StreamFailed,
    TextDelta,
    TokenUsage,
    ToolSpec,
    UsageReported,
    user_message,
)

SUMMARY_INSTRUCTIONS = """\
You are compacting the working memory of an AI coding agent. The conversation between a user \
and the agent is too long for the context window, so its earlier part will be replaced by \
your summary. The agent (another instance of you) will continue the work with nothing but \
your summary and what is still open (the user's latest request if it is not answered yet, \
and the latest tool results). Anything you leave out is lost.

Write the summary in this structure, with these headings:

## User requests
Every request and instruction the user gave, in order. Quote them verbatim when they are \
short; otherwise keep every requirement, constraint, preference and acceptance criterion. \
Mark which request is the current one, and say whether it has been answered.

## Progress and decisions
What has been done so far, the decisions taken and why, approaches that were tried and \
rejected (and why), and anything the user approved or refused.

## Files
Every file that was read, created, modified or deleted, as a path relative to the workspace, \
each with one line on what changed or why it matters. Keep exact names of functions, classes \
and settings that were touched.

## Commands and results
Important commands that were run and their outcome: builds, tests (which pass, which fail \
and with what error), installs. Keep exact error messages when they matter.

## Open items
What remains to be done for the current request, known problems, and the very next step.

Rules: be specific and factual; keep paths, identifiers, numbers and error texts exact; do \
not invent anything; do not address the user; write only the summary."""

_TRANSCRIPT_PROMPT = """\
Here is the earlier part of the conversation to summarise, as a transcript:

<transcript>
{transcript}
</transcript>

Write the summary now, following your instructions.{focus}"""

_OMITTED = "[... {count} earlier messages omitted to fit the summariser's context ...]"

# Caps per transcript block, in characters: a request matters more than a tool's output.
_REQUEST_CAP = 12_000
_TEXT_CAP = 6_000
_ARGUMENTS_CAP = 600
_RESULT_CAP = 2_000
_CHARS_PER_TOKEN = 4


class SummaryModel(Protocol):
    """What compaction needs of a provider; every `tui_agent.llm` provider satisfies it."""

    def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]: ...


@dataclass(frozen=True)
class CompactionResult:
    summary: str
    kept: tuple[HistoryEntry, ...]
    tokens_before: int
    tokens_after: int
    usage: TokenUsage | None = None  # what the summary request cost

    @property
    def history(self) -> tuple[HistoryEntry, ...]:
        """The history from now on: the summary message, then the kept entries."""
        return (summary_entry(self.summary), *self.kept)

    def record(self) -> Compaction:
        return Compaction(
            summary=self.summary,
            kept=self.kept,
            tokens_before=self.tokens_before,
            tokens_after=self.tokens_after,
        )


@dataclass(frozen=True)
class CompactionFailed:
    """Why compaction did not happen; `message` reads well after "Compaction failed: "."""

    code: str  # context.nothing_to_compact | context.summary_failed | context.summary_empty
    message: str
    error: LLMError | None = None


async def compact(
    history: Sequence[HistoryEntry] | ContextMemory,
    summariser: SummaryModel,
    model: str,
    *,
    system: str = "",
    tools: Sequence[ToolSpec] = (),
    context_window: int | None = None,
    max_summary_tokens: int = 4_096,
    focus: str | None = None,
) -> CompactionResult | CompactionFailed:
    """Summarise the older part of `history` with `summariser` (the session's own provider)
    asking for `model`; `focus` is the user's hint (`/compact FOCUS`)."""
    entries = list(history.entries if isinstance(history, ContextMemory) else history)
    older, kept = split_for_compaction(entries)
    if not any(not is_summary(entry) for entry in older):
        return CompactionFailed(
            code="context.nothing_to_compact",
            message="nothing to compact: the history is only the current request and its tools",
        )
    budget = None
    if context_window is not None:
        budget = max(context_window * 3 // 4 - max_summary_tokens, 1_000) * _CHARS_PER_TOKEN
    transcript = render_transcript(older, max_chars=budget)
    hint = f"\n\nThe user asked the summary to focus on: {focus.strip()}" if focus else ""
    request = LLMRequest(
        model=model,
        system=SUMMARY_INSTRUCTIONS,
        messages=(user_message(_TRANSCRIPT_PROMPT.format(transcript=transcript, focus=hint)),),
        max_tokens=max_summary_tokens,
    )
    outcome = await _summarise(summariser, request)
    if isinstance(outcome, CompactionFailed):
        return outcome
    summary, usage = outcome
    return CompactionResult(
        summary=summary,
        kept=tuple(kept),
        tokens_before=estimate_tokens(entries, system=system, tools=tools),
        tokens_after=estimate_tokens([summary_entry(summary), *kept], system=system, tools=tools),
        usage=usage,
    )


def split_for_compaction(
    entries: Sequence[HistoryEntry],
) -> tuple[list[HistoryEntry], list[HistoryEntry]]:
    """(older, kept): what the summary replaces and what stays verbatim, both in order.

    Kept entries lose their usage figures: they describe a context that no longer exists and
    would make the next token estimate count the summarised history again.
    """
    tail = 0
    for index in range(len(entries) - 1, -1, -1):
        message = entries[index].message
        if message.role == "assistant":
            tail = index if message.tool_calls else index + 1
            break
    answered = -1  # the last final answer (no calls): every request before it is answered
    for index in range(len(entries) - 1, -1, -1):
        message = entries[index].message
        if message.role == "assistant" and not message.tool_calls:
            answered = index
            break
    request = None
    for index in range(len(entries) - 1, -1, -1):
        if entries[index].message.role == "user" and entries[index].meta.source == "input":
            request = index
            break
    kept_indices = list(range(tail, len(entries)))
    if request is not None and answered < request < tail:
        # Still open: the model is working on it. An answered one goes into the summary
        # only; kept verbatim after it, it would read as a request to do again.
        kept_indices.insert(0, request)
    kept_set = set(kept_indices)
    older = [entry for index, entry in enumerate(entries) if index not in kept_set]
    kept = [_without_usage(entries[index]) for index in kept_indices]
    return older, kept


def _without_usage(entry: HistoryEntry) -> HistoryEntry:
    if entry.meta.usage is None:
        return entry
    return entry.model_copy(update={"meta": entry.meta.model_copy(update={"usage": None})})


def render_transcript(entries: Sequence[HistoryEntry], *, max_chars: int | None = None) -> str:
    """A plain-text transcript; over `max_chars`, the oldest non-request blocks go first."""
    names: dict[str, str] = {}
    blocks: list[tuple[bool, str]] = []  # (kept whatever the budget: a request, text)
    for entry in entries:
        message = entry.message
        if is_summary(entry):
            blocks.append((True, f"[summary of the conversation before]\n{message.text}"))
        elif message.role in ("user", "system"):
            request = entry.meta.source == "input"
            label = "user" if request else f"{entry.meta.source} message"
            cap = _REQUEST_CAP if request else _TEXT_CAP
            blocks.append((request, f"[{label}]\n{_cut(message.text, cap)}"))
        elif message.role == "assistant":
            lines = []
            if message.text.strip():
                lines.append(f"[assistant]\n{_cut(message.text, _TEXT_CAP)}")
            for call in message.tool_calls:
                names[call.id] = call.name
                args = _cut(call.arguments, _ARGUMENTS_CAP)
                lines.append(f"[assistant called {call.name}] {args}")
            if lines:
                blocks.append((False, "\n".join(lines)))
        else:
            name = names.get(message.tool_call_id or "", "tool")
            status = " (error)" if message.is_error else ""
            output = _cut(message.text, _RESULT_CAP) or "(empty)"
            blocks.append((False, f"[result of {name}{status}]\n{output}"))
    total = sum(len(text) + 2 for _, text in blocks)
    dropped: set[int] = set()
    if max_chars is not None:
        for index, (request, text) in enumerate(blocks):
            if total <= max_chars:
                break
            if not request:
                dropped.add(index)
                total -= len(text) + 2
    texts = [text for index, (_, text) in enumerate(blocks) if index not in dropped]
    if dropped:
        texts.insert(0, _OMITTED.format(count=len(dropped)))
    return "\n\n".join(texts)


def _cut(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    half = cap // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


async def _summarise(
    summariser: SummaryModel, request: LLMRequest
) -> tuple[str, TokenUsage | None] | CompactionFailed:
    chunks: list[str] = []
    usage: TokenUsage | None = None
    finish: FinishReason | None = None
    try:
        async for event in summariser.stream(request):
            if isinstance(event, TextDelta):
                chunks.append(event.text)
            elif isinstance(event, UsageReported):
                usage = event.usage if usage is None else usage.merge(event.usage)
            elif isinstance(event, StreamFinished):
                finish = event.finish.reason
            elif isinstance(event, StreamFailed):
                return CompactionFailed(
                    code="context.summary_failed",
                    message=f"the summary request failed: {event.error.message}",
                    error=event.error,
                )
    except Exception as exc:  # a provider bug must not take the history with it
        return CompactionFailed(
            code="context.summary_failed",
            message=f"the summary request raised {type(exc).__name__}",
        )
    summary = "".join(chunks).strip()
    if finish in (FinishReason.FILTERED, FinishReason.REFUSAL) or not summary:
        return CompactionFailed(
            code="context.summary_empty",
            message="the model returned no summary",
        )
    if finish is FinishReason.MAX_TOKENS:
        summary += "\n\n(The summary was cut off at its length limit.)"
    return summary, usage
