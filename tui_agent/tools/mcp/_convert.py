"""A server's `CallToolResult` as our `ToolResult`.

Text blocks are kept apart; images become image parts (each provider passes them on its own
way); audio is named in text; a resource link names the call that reads it
(`read_mcp_resource`), an embedded resource is given as its text (or image);
`structuredContent` is added as JSON unless it only repeats the text (the SDK's own servers
wrap a plain return value as `{"result": ...}` beside its text); `isError` makes an error
result. Spilling happens later, as for built-ins.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tui_agent.tools.mcp._listing import contents_part
from tui_agent.vocab import ContentPart, ImagePart, TextPart, ToolResult

if TYPE_CHECKING:
    from mcp.types import CallToolResult


def to_tool_result(result: CallToolResult, server: str) -> ToolResult:
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
            parts.append(TextPart(text=resource_link(server, block.uri, block.name)))
        elif block.type == "resource":
            parts.append(contents_part(block.resource))
    structured = result.structured_content
    if structured is not None and not _repeats(structured, "\n".join(texts), len(result.content)):
        parts.append(TextPart(text=json.dumps(structured, ensure_ascii=False, indent=1)))
    output: str | tuple[ContentPart, ...]
    if all(isinstance(part, TextPart) for part in parts):
        output = "\n".join(part.text for part in parts if isinstance(part, TextPart))
    else:
        output = tuple(parts)
    # The transcript shows each image as a chip (the text output has no place for it).
    images = [image_chip(part) for part in parts if isinstance(part, ImagePart)]
    display = {"images": images} if images else None
    return ToolResult(output=output, is_error=bool(result.is_error), display=display)


def image_chip(part: ImagePart) -> str:
    """`image/png · 2.1 kB`: what the transcript's chip says of an image."""
    size = len(part.data) * 3 // 4 - part.data[-2:].count("=")
    return f"{part.media_type} · " + (f"{size / 1024:.1f} kB" if size >= 1024 else f"{size} B")


def resource_link(server: str, uri: str, name: str) -> str:
    """A link the model can follow: the call that reads it."""
    call = json.dumps({"server": server, "uri": uri}, ensure_ascii=False)
    return f"[resource {name!r}: {uri}; read it with read_mcp_resource {call}]"


def _repeats(structured: Any, text: str, blocks: int) -> bool:
    if isinstance(structured, dict) and set(structured) == {"result"}:
        value = structured["result"]
        if value == text or (isinstance(value, list) and len(value) == blocks):
            return True
    try:
        return bool(json.loads(text) == structured)
    except ValueError:
        return False
