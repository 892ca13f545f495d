"""What a server offers besides tools: its resources and prompts, listed and read.

Both lists are asked for only when the server declares the capability (a server without it may
answer with an error, which is not a fault of ours). Resource contents become content parts:
text as text, images as image parts, other binary data named with its type and size; a prompt
becomes the text of its messages, ready to send as the user's prompt.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING

from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import ContentPart, ImagePart, TextPart

if TYPE_CHECKING:
    from mcp.client.session import ClientSession
    from mcp.types import (
        BlobResourceContents,
        GetPromptResult,
        ReadResourceResult,
        TextResourceContents,
    )

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


@dataclass(frozen=True)
class ServerResource:
    """A resource as the server lists it."""

    uri: str
    name: str
    title: str | None = None
    description: str = ""
    mime_type: str | None = None


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class ServerPrompt:
    """A prompt (template) as the server lists it."""

    name: str
    title: str | None = None
    description: str = ""
    arguments: tuple[PromptArgument, ...] = ()


async def list_resources(session: ClientSession) -> tuple[ServerResource, ...]:
    from mcp.types import PaginatedRequestParams

    capabilities = session.server_capabilities
    if capabilities is None or capabilities.resources is None:
        return ()
    found: list[ServerResource] = []
    cursor: str | None = None
    while True:
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_resources(params=params)
        found.extend(
            ServerResource(
                uri=str(item.uri),
                name=item.name,
                title=item.title,
                description=item.description or "",
                mime_type=item.mime_type,
            )
            for item in page.resources
        )
        cursor = page.next_cursor
        if not cursor:
            return tuple(found)


async def list_prompts(session: ClientSession) -> tuple[ServerPrompt, ...]:
    from mcp.types import PaginatedRequestParams

    capabilities = session.server_capabilities
    if capabilities is None or capabilities.prompts is None:
        return ()
    found: list[ServerPrompt] = []
    cursor: str | None = None
    while True:
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_prompts(params=params)
        found.extend(
            ServerPrompt(
                name=item.name,
                title=item.title,
                description=item.description or "",
                arguments=tuple(
                    PromptArgument(arg.name, arg.description or "", bool(arg.required))
                    for arg in item.arguments or ()
                ),
            )
            for item in page.prompts
        )
        cursor = page.next_cursor
        if not cursor:
            return tuple(found)


def resource_parts(result: ReadResourceResult) -> tuple[ContentPart, ...]:
    """A read resource as content parts, one per item it holds."""
    return tuple(contents_part(item) for item in result.contents)


def contents_part(item: TextResourceContents | BlobResourceContents) -> ContentPart:
    text = getattr(item, "text", None)
    if isinstance(text, str):
        return TextPart(text=text)
    blob = str(getattr(item, "blob", ""))
    mime = item.mime_type or "application/octet-stream"
    if mime in IMAGE_TYPES:
        return ImagePart(media_type=mime, data=blob)
    try:
        size = len(base64.b64decode(blob, validate=True))
    except (binascii.Error, ValueError):
        size = len(blob)
    return TextPart(text=f"[{item.uri}: {mime}, {size} bytes of binary data, not shown]")


def prompt_text(result: GetPromptResult) -> str:
    """The prompt's messages as one text (a prompt is sent as what the user says)."""
    texts: list[str] = []
    for message in result.messages:
        block = message.content
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "resource":
            part = contents_part(block.resource)
            texts.append(part.text if isinstance(part, TextPart) else f"[{block.resource.uri}]")
        elif block.type == "resource_link":
            texts.append(f"[resource: {block.uri}]")
        else:
            texts.append(f"[{block.type}: {block.mime_type}, not included]")
    return "\n\n".join(texts)
