"""Projection: the messages the model is sent for a history, valid for both wire protocols.

What the model sees of a tool result differs from what the transcript shows: an error gets a
status line, an empty output says so (some providers reject empty tool content, and the model
should not guess), and the result's model-only `note` is appended; an answer a cancel cut off
(a `salvaged` entry) ends with "[interrupted by the user]". The projection also makes
any history well-formed, whatever produced it: every assistant tool call is followed at once by
exactly one tool message per call, in call order (a missing one says the tool was
interrupted); stray tool messages, empty assistants and empty user messages are dropped; a
`system` entry inside the history becomes a user message, since Anthropic accepts system text
only in the request's `system` field.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_agent.context._bulk import gc_paused
from tui_agent.context._fold import interrupted_result
from tui_agent.vocab import ContentPart, HistoryEntry, Message, TextPart, is_vacuous

ERROR_PREFIX = "<system>ERROR: Tool execution failed.</system>"
EMPTY_OUTPUT = "<system>Tool output is empty.</system>"
ERROR_EMPTY_OUTPUT = "<system>ERROR: Tool execution failed. Tool output is empty.</system>"
INTERRUPTED_ANSWER = "[interrupted by the user]"


def project(entries: Sequence[HistoryEntry]) -> list[Message]:
    with gc_paused():
        return _project(entries)


def _project(entries: Sequence[HistoryEntry]) -> list[Message]:
    messages: list[Message] = []
    index = 0
    while index < len(entries):
        entry = entries[index]
        message = entry.message
        index += 1
        if message.role == "tool":
            continue  # answered calls consume their results below; these answer nothing
        if message.role == "assistant":
            content = tuple(part for part in message.content if not is_vacuous(part))
            if not content and not message.tool_calls:
                continue
            if entry.meta.source == "salvaged":
                # Cut off by a cancel: the model must not take it for a whole answer.
                content = (*content, TextPart(text=f"\n\n{INTERRUPTED_ANSWER}"))
            if content != message.content:
                message = message.model_copy(update={"content": content})
            messages.append(message)
            answers: dict[str, HistoryEntry] = {}
            while index < len(entries) and entries[index].message.role == "tool":
                call_id = entries[index].message.tool_call_id
                if call_id is not None:
                    answers.setdefault(call_id, entries[index])
                index += 1
            for call in message.tool_calls:
                messages.append(
                    project_tool_result(answers.get(call.id) or interrupted_result(call.id))
                )
            continue
        if all(is_vacuous(part) for part in message.content):
            continue
        if message.role == "system":
            message = Message(role="user", content=message.content)
        messages.append(message)
    return messages


def project_tool_result(entry: HistoryEntry) -> Message:
    """The tool message the model sees: status line, output, then the model-only note."""
    message = entry.message
    note = entry.meta.note
    text_only = all(isinstance(part, TextPart) for part in message.content)
    if text_only:
        text = tool_result_text(message.text, is_error=message.is_error, note=note)
        content: tuple[ContentPart, ...] = (TextPart(text=text),)
    else:
        parts: list[ContentPart] = []
        if message.is_error:
            parts.append(TextPart(text=ERROR_PREFIX))
        parts.extend(message.content)
        if note:
            parts.append(TextPart(text=note))
        content = tuple(parts)
    return Message(
        role="tool", content=content, tool_call_id=message.tool_call_id, is_error=message.is_error
    )


def tool_result_text(output: str, *, is_error: bool, note: str | None = None) -> str:
    if output:
        text = f"{ERROR_PREFIX}\n{output}" if is_error else output
    else:
        text = ERROR_EMPTY_OUTPUT if is_error else EMPTY_OUTPUT
    return f"{text}\n{note}" if note else text
