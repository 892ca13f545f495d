"""Images a prompt carries: read from a file or the clipboard, checked and shrunk to what the
provider takes, and named for the transcript's chip.

Both providers take PNG, JPEG, GIF and WebP as base64. Their documented ceilings differ:
Anthropic refuses an image over 5 MB or 8000 px a side (2000 px once a request holds more than
20 images) and resizes anything over 1568 px on the long edge itself, so bigger costs tokens and
bytes for nothing; OpenAI fits a detailed image into 2048 px and takes up to 50 MB a request.
An image is therefore scaled down (Pillow, aspect kept) to the provider's long edge, and when
its bytes are still over the limit it is re-encoded as JPEG; what cannot get under the limit is
refused with a message saying why. Nothing is sent that the provider would reject.
"""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import ImagePart

if TYPE_CHECKING:
    from PIL.Image import Image

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
MAX_SOURCE_BYTES = 50 * 1024 * 1024  # not even opened beyond this (a photo is a few MB)
MAX_SOURCE_PIXELS = 100_000_000  # a decompression bomb is refused before it is decoded


@dataclass(frozen=True)
class ImageLimits:
    max_edge: int  # pixels on the long edge; larger is scaled down
    max_bytes: int  # base64 characters of one image


# Anthropic: 1568 px is the size it would resize to (and under the 2000 px many-image limit);
# 5 MB is its hard limit per image. OpenAI: detail "high" fits the image into 2048 px; 20 MB
# per image keeps a few images under its 50 MB per request. Others: the stricter of the two.
LIMITS = {
    "anthropic": ImageLimits(max_edge=1568, max_bytes=5 * 1024 * 1024),
    "openai": ImageLimits(max_edge=2048, max_bytes=20 * 1024 * 1024),
}


def limits_for(provider: str) -> ImageLimits:
    return LIMITS.get(provider, LIMITS["anthropic"])


class ImageError(Exception):
    """An image that cannot be attached; the message says why, for the person."""


@dataclass(frozen=True)
class LoadedImage:
    name: str  # the file's name, or "clipboard.png"
    part: ImagePart
    width: int
    height: int
    original: tuple[int, int] | None = None  # the size before scaling down, when it was

    @property
    def size(self) -> int:
        """Bytes of the encoded image (what base64 carries)."""
        return len(self.part.data) * 3 // 4

    @property
    def details(self) -> str:
        """Pixels and bytes, for the chip."""
        return f"{self.width}×{self.height} · {_bytes(self.size)}"

    @property
    def note(self) -> str:
        """What the model reads beside the image."""
        shrunk = ""
        if self.original is not None:
            shrunk = f", scaled down from {self.original[0]}×{self.original[1]}"
        return f"image {self.name} ({self.part.media_type}, {self.width}×{self.height}{shrunk})"


def is_image_path(path: str) -> bool:
    return Path(path).suffix.lower() in IMAGE_TYPES


def pasted_image_path(text: str) -> Path | None:
    """The image file a paste names, or None. A file dropped on a terminal arrives as its path,
    quoted (`'/a/My Shot.png'`), backslash-escaped (`/a/My\\ Shot.png`) or as a `file://` URI."""
    pasted = text.strip()
    if not pasted or "\n" in pasted:
        return None
    if len(pasted) > 1 and pasted[0] == pasted[-1] and pasted[0] in "'\"":
        pasted = pasted[1:-1]
    elif pasted.startswith("file://"):
        pasted = unquote(urlsplit(pasted).path)
    else:
        pasted = re.sub(r"\\(.)", r"\1", pasted)
    path = Path(pasted).expanduser()
    return path if path.is_absolute() and is_image_path(pasted) and path.is_file() else None


def load_image(path: Path, limits: ImageLimits) -> LoadedImage:
    """The image at `path`, within `limits`; `ImageError` says why not. Blocking: run it in a
    thread."""
    try:
        size = path.stat().st_size
        if size > MAX_SOURCE_BYTES:
            limit = _bytes(MAX_SOURCE_BYTES)
            raise ImageError(f"{path.name} is {_bytes(size)}; images over {limit} are not read")
        data = path.read_bytes()
    except OSError as exc:
        raise ImageError(f"cannot read {path.name}: {exc.strerror or exc}") from None
    return image_from_bytes(data, path.name, limits)


def image_from_bytes(data: bytes, name: str, limits: ImageLimits) -> LoadedImage:
    """`data` decoded, checked and, when needed, scaled down or re-encoded to fit `limits`."""
    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(io.BytesIO(data))
        width, height = image.size
        if width * height > MAX_SOURCE_PIXELS:
            raise ImageError(
                f"{name} is {width}×{height} pixels; images over {MAX_SOURCE_PIXELS // 1_000_000} "
                "megapixels are not attached"
            )
        media_type = _FORMATS.get(image.format or "")
        if media_type is None:
            raise ImageError(
                f"{name} is {image.format or 'an unknown'} image; PNG, JPEG, GIF and WebP can be "
                "attached"
            )
        image.load()
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as exc:
        raise ImageError(f"{name} is not an image that can be read: {exc}") from None
    animated = bool(getattr(image, "is_animated", False))
    if max(width, height) <= limits.max_edge and not animated:
        part = ImagePart(media_type=media_type, data=base64.b64encode(data).decode())
        if len(part.data) <= limits.max_bytes:
            return LoadedImage(name, part, width, height)
    return _shrunk(image, name, limits)


def _shrunk(image: Image, name: str, limits: ImageLimits) -> LoadedImage:
    """Scaled to the long edge (the first frame of an animation), then PNG or WebP kept when
    they fit, JPEG when they do not."""
    from PIL import Image as PILImage

    original = image.size
    frame = image.convert("RGBA" if _has_alpha(image) else "RGB")
    frame.thumbnail((limits.max_edge, limits.max_edge), PILImage.Resampling.LANCZOS)
    keep = "WEBP" if image.format == "WEBP" else "PNG"
    for fmt in (keep, "JPEG"):
        encoded = io.BytesIO()
        out = frame.convert("RGB") if fmt == "JPEG" else frame
        out.save(encoded, format=fmt, **({"quality": 85} if fmt == "JPEG" else {}))
        data = base64.b64encode(encoded.getvalue()).decode()
        if len(data) <= limits.max_bytes:
            part = ImagePart(media_type=_FORMATS[fmt], data=data)
            scaled = None if frame.size == original else original
            return LoadedImage(name, part, frame.width, frame.height, scaled)
    raise ImageError(
        f"{name} stays over {_bytes(limits.max_bytes)} even scaled to {frame.width}×{frame.height} "
        "as JPEG; crop it or attach a smaller one"
    )


def _has_alpha(image: Image) -> bool:
    return image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info


def _bytes(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    return f"{max(1, round(size / 1024))} KB"


# ---------------------------------------------------------------- the clipboard


def clipboard_image() -> bytes | None:
    """The image on the clipboard (Wayland's `wl-paste`, else X11's `xclip`), or None when there
    is no such tool or the clipboard holds no image. Blocking: run it in a thread."""
    for list_types, read in _clipboard_tools():
        try:
            types = subprocess.run(list_types, capture_output=True, timeout=2, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        offered = types.stdout.decode(errors="replace").split()
        wanted = next((t for t in ("image/png", *_FORMATS.values()) if t in offered), None)
        if wanted is None:
            continue
        try:
            got = subprocess.run([*read, wanted], capture_output=True, timeout=5, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if got.returncode == 0 and got.stdout:
            return got.stdout
    return None


def _clipboard_tools() -> list[tuple[list[str], list[str]]]:
    tools: list[tuple[list[str], list[str]]] = []
    if shutil.which("wl-paste"):
        tools.append((["wl-paste", "--list-types"], ["wl-paste", "--no-newline", "--type"]))
    if shutil.which("xclip"):
        tools.append(
            (
                ["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"],
                ["xclip", "-selection", "clipboard", "-o", "-t"],
            )
        )
    return tools
