"""Images in tool results, for the APIs whose tool messages carry text only.

OpenAI's Chat Completions `tool` messages and Responses' `function_call_output` take text; an
image a tool returned (an MCP server's screenshot) would be lost. `images_after_tools` rewrites
a history so that each such tool message keeps its text (parts joined by line breaks, never
glued) with a placeholder where each image was, and the images follow the run of tool messages
as one user message, with a note naming the call each came from. Anthropic's `tool_result`
carries images itself and does not need this.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_agent.vocab import ContentPart, ImagePart, Message, TextPart


def images_after_tools(messages: Sequence[Message]) -> list[Message]:
    out: list[Message] = []
    names: dict[str, str] = {}  # call id → tool name, from the assistant's calls
    held: list[ContentPart] = []  # the images of the current run of tool messages
    for message in messages:
        if message.role != "tool" and held:
            out.append(Message(role="user", content=tuple(held)))
            held = []
        if message.role == "assistant":
            names.update((call.id, call.name) for call in message.tool_calls)
        if message.role != "tool" or not any(isinstance(p, ImagePart) for p in message.content):
            out.append(message)
            continue
        call = message.tool_call_id or ""
        texts: list[str] = []
        images = 0
        for part in message.content:
            if isinstance(part, TextPart):
                texts.append(part.text)
            elif isinstance(part, ImagePart):
                images += 1
                texts.append(f"[image {images}: attached in the next user message]")
        note = (
            f"The {images} image(s) returned by the tool call {call} ({names.get(call, 'tool')}):"
        )
        held.append(TextPart(text=note))
        held.extend(part for part in message.content if isinstance(part, ImagePart))
        text = TextPart(text="\n".join(texts))
        out.append(message.model_copy(update={"content": (text,)}))
    if held:
        out.append(Message(role="user", content=tuple(held)))
    return out
