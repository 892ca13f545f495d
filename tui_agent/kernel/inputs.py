"""Pure helpers for the agent's inputs: steer merges and background-tool notifications."""

from __future__ import annotations

from collections.abc import Sequence

from tui_agent.vocab import (
    ContentPart,
    EntryMeta,
    HistoryEntry,
    Message,
    TextPart,
    ToolResult,
    ToolStatus,
    tool_status,
)


def merge_steer(items: Sequence[HistoryEntry]) -> HistoryEntry:
    """Steered prompts become ONE in-turn user message, their parts in queue order."""
    content = tuple(part for item in items for part in item.message.content)
    prompt_ids = tuple(item.meta.prompt_id for item in items if item.meta.prompt_id is not None)
    meta = EntryMeta(
        source="input",
        prompt_id=prompt_ids[0] if len(items) == 1 and prompt_ids else None,
        prompt_ids=prompt_ids,
        in_turn=True,
        created_at=items[0].meta.created_at if items else None,
    )
    return HistoryEntry(message=Message(role="user", content=content), meta=meta)


_VERBS: dict[ToolStatus, str] = {
    "done": "completed",
    "failed": "failed",
    "denied": "denied",
    "aborted": "stopped",
}


def async_tool_notification(
    call_id: str, name: str, outcome: str, result: ToolResult
) -> HistoryEntry:
    """How a background call's completion (or failure) reaches the model later: said with
    the call's status (`tool_status`), so an error result never reads as completed."""
    status = tool_status(is_error=result.is_error, display=result.display, outcome=outcome)
    verb = _VERBS[status]
    head = f"[async tool {verb}] {name} (tool_call_id={call_id})"
    if isinstance(result.output, str):
        content: tuple[ContentPart, ...] = (TextPart(text=f"{head}\n{result.output}"),)
    else:
        content = (TextPart(text=head), *result.output)
    message = Message(role="user", content=content)
    return HistoryEntry(message=message, meta=EntryMeta(source="async-tool"))


def ends_mid_tool_chain(history: Sequence[HistoryEntry]) -> bool:
    """The last message is a tool result, or an assistant message that asked for tools."""
    if not history:
        return False
    last = history[-1].message
    return last.role == "tool" or (last.role == "assistant" and bool(last.tool_calls))
