"""An ACP prompt (text, resource links, embedded resources) as the text of one of our prompts.

Text blocks are the user's words. A resource link is named inline (the model can read the file
with its tools); an embedded resource (an editor buffer, a selection) is attached whole as
context, since its text may not be on disk. Binary resources and media are named, not sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp import schema as acp

EMBEDDED_CAP = 200_000  # characters of one embedded resource


def prompt_text(blocks: Sequence[Any]) -> str:
    words: list[str] = []
    context: list[str] = []
    for block in blocks:
        match block:
            case acp.TextContentBlock():
                words.append(block.text)
            case acp.ResourceContentBlock():
                words.append(f"@{_path(block.uri)}")
            case acp.EmbeddedResourceContentBlock(resource=acp.TextResourceContents() as res):
                text = res.text if len(res.text) <= EMBEDDED_CAP else res.text[:EMBEDDED_CAP]
                context.append(f'<context uri="{res.uri}">\n{text}\n</context>')
                words.append(f"@{_path(res.uri)}")
            case acp.EmbeddedResourceContentBlock(resource=acp.BlobResourceContents() as blob):
                words.append(f"[binary resource {blob.uri} ({blob.mime_type or 'unknown type'})]")
            case _:
                kind = getattr(block, "type", type(block).__name__)
                words.append(f"[{kind} content is not supported by this agent]")
    prompt = " ".join(word for word in words if word)
    if context:
        prompt += "\n\nAttached by the user:\n" + "\n\n".join(context)
    return prompt


def _path(uri: str) -> str:
    return uri.removeprefix("file://")
