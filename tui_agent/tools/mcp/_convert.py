"""A server's `CallToolResult` as our `ToolResult`.

Text blocks are joined; images become image parts (the providers pass them on or describe
them); audio and resources are named in text; `structuredContent` is added as JSON unless it
only repeats the text (the SDK's own servers wrap a plain return value as `{"result": ...}`
beside its text); `isError` makes an error result. Spilling happens later, as for built-ins.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tui_agent.vocab import ContentPart, ImagePart, TextPart, ToolResult

if TYPE_CHECKING:
    from mcp.types import CallToolResult


def to_tool_result(result: CallToolResult) -> ToolResult:
    parts: list[ContentPart] = []
    texts: list[str] = []
    for block in result.content:
        if block.type == "text":
            texts.append(block.text)
            parts.append(TextPart(text=block.text))
        elif block.type == "image":
            parts.append(ImagePart(media_type=block.mime_type, data=block.data))
        elif block.type == "audio":
            parts.append(TextPart(text=f"[audio: {block.mime_type}, not shown to the model]"))
        elif block.type == "resource_link":
            parts.append(TextPart(text=f"[resource: {block.uri}]"))
        elif block.type == "resource":
            resource = block.resource
            body = getattr(resource, "text", None)
            parts.append(TextPart(text=body if body is not None else f"[resource: {resource.uri}]"))
    structured = result.structured_content
    if structured is not None and not _repeats(structured, "\n".join(texts), len(result.content)):
        parts.append(TextPart(text=json.dumps(structured, ensure_ascii=False, indent=1)))
    output: str | tuple[ContentPart, ...]
    if all(isinstance(part, TextPart) for part in parts):
        output = "\n".join(part.text for part in parts if isinstance(part, TextPart))
    else:
        output = tuple(parts)
    return ToolResult(output=output, is_error=bool(result.is_error))


def _repeats(structured: Any, text: str, blocks: int) -> bool:
    if isinstance(structured, dict) and set(structured) == {"result"}:
        value = structured["result"]
        if value == text or (isinstance(value, list) and len(value) == blocks):
            return True
    try:
        return bool(json.loads(text) == structured)
    except ValueError:
        return False
