"""An ACP prompt (text, resource links, embedded resources, images) as one of our prompts.

Text blocks are the user's words. A resource link is named inline (the model can read the file
with its tools); an embedded resource (an editor buffer, a selection) is attached whole as
context, since its text may not be on disk. Images take the app's path (`session.image_from_bytes`:
checked and scaled to the provider's limits, then attached with a line naming them); one that
cannot be sent refuses the prompt with the reason. Binary resources and audio are named, not
sent.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Sequence
from typing import Any

from acp import RequestError
from acp import schema as acp

from tui_agent.session import ImageError, LoadedImage, image_from_bytes, limits_for

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
            case acp.ImageContentBlock():
                pass  # `prompt_images` attaches it
            case _:
                kind = getattr(block, "type", type(block).__name__)
                words.append(f"[{kind} content is not supported by this agent]")
    prompt = " ".join(word for word in words if word)
    if context:
        prompt += "\n\nAttached by the user:\n" + "\n\n".join(context)
    return prompt


async def prompt_images(blocks: Sequence[Any], provider: str) -> list[tuple[str, LoadedImage]]:
    """The prompt's images, each with the name its chip and its line show."""
    images = []
    for number, block in enumerate(b for b in blocks if isinstance(b, acp.ImageContentBlock)):
        name = _path(block.uri).rsplit("/", 1)[-1] if block.uri else f"image-{number + 1}"
        try:
            data = base64.b64decode(block.data, validate=True)
            image = await asyncio.to_thread(image_from_bytes, data, name, limits_for(provider))
        except (ValueError, ImageError) as error:  # binascii.Error is a ValueError
            raise RequestError.invalid_params({"image": f"{name}: {error}"}) from error
        images.append((name, image))
    return images


def _path(uri: str) -> str:
    return uri.removeprefix("file://")
