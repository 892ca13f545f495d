"""Images in prompts: read, checked against each provider's limits, scaled down or refused with a
reason; pasted paths recognised; mentioned images attached beside the words."""

from __future__ import annotations

import base64
import io
import random
from pathlib import Path

import pytest
from PIL import Image

from tui_agent.session import (
    ImageError,
    ImageLimits,
    attach,
    image_from_bytes,
    images_of,
    limits_for,
    load_image,
    pasted_image_path,
    read_mentions,
)


def png(width: int, height: int, *, noise: bool = False, fmt: str = "PNG") -> bytes:
    image = Image.new("RGB", (width, height), (30, 120, 200))
    if noise:  # incompressible: the bytes grow with the pixels
        rng = random.Random(7)
        image.frombytes(rng.randbytes(width * height * 3))
    out = io.BytesIO()
    image.save(out, format=fmt)
    return out.getvalue()


def decoded(data: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(data)))


def test_an_image_within_the_limits_is_sent_as_it_is() -> None:
    data = png(64, 48)
    image = image_from_bytes(data, "shot.png", limits_for("anthropic"))
    assert base64.b64decode(image.part.data) == data
    assert (image.part.media_type, image.width, image.height, image.original) == (
        "image/png",
        64,
        48,
        None,
    )
    assert image.details == "64×48 · 1 KB"


@pytest.mark.parametrize(("provider", "edge"), [("anthropic", 1568), ("openai", 2048)])
def test_a_larger_image_is_scaled_to_the_providers_long_edge(provider: str, edge: int) -> None:
    image = image_from_bytes(png(4000, 1000), "wide.png", limits_for(provider))
    assert (image.width, image.height) == (edge, edge // 4)
    assert image.original == (4000, 1000)
    assert decoded(image.part.data).size == (edge, edge // 4)
    assert "scaled down from 4000×1000" in image.note


def test_an_image_too_heavy_as_png_is_sent_as_jpeg() -> None:
    heavy = png(300, 300, noise=True)  # ~270 KB as PNG
    limits = ImageLimits(max_edge=1568, max_bytes=200_000)
    image = image_from_bytes(heavy, "noise.png", limits)
    assert image.part.media_type == "image/jpeg"
    assert len(image.part.data) <= limits.max_bytes
    assert decoded(image.part.data).format == "JPEG"


def test_an_image_that_cannot_get_under_the_limit_is_refused_with_the_reason() -> None:
    with pytest.raises(ImageError, match=r"noise\.png stays over 1 KB even scaled"):
        image_from_bytes(png(300, 300, noise=True), "noise.png", ImageLimits(1568, 1000))


def test_an_animated_gif_is_sent_as_its_first_frame() -> None:
    frames = [Image.new("RGB", (20, 10), color) for color in ("red", "blue")]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:])
    image = image_from_bytes(out.getvalue(), "anim.gif", limits_for("openai"))
    assert image.part.media_type == "image/png"
    assert decoded(image.part.data).size == (20, 10)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"not an image at all", "not an image that can be read"),
        (png(10, 10, fmt="BMP"), "BMP image; PNG, JPEG, GIF and WebP can be attached"),
    ],
)
def test_what_is_no_supported_image_is_refused(data: bytes, reason: str) -> None:
    with pytest.raises(ImageError, match=reason):
        image_from_bytes(data, "x.png", limits_for("anthropic"))


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match=r"cannot read gone\.png"):
        load_image(tmp_path / "gone.png", limits_for("anthropic"))


def test_a_pasted_path_of_an_image_is_recognised_in_every_form(tmp_path: Path) -> None:
    shot = tmp_path / "My Shot.png"
    shot.write_bytes(png(4, 4))
    escaped = str(shot).replace(" ", "\\ ")
    for pasted in (f"'{shot}'", f'"{shot}"', escaped, f"file://{str(shot).replace(' ', '%20')}"):
        assert pasted_image_path(pasted + "\n") == shot, pasted
    (tmp_path / "notes.txt").write_text("x")
    assert pasted_image_path(str(tmp_path / "notes.txt")) is None
    assert pasted_image_path(str(tmp_path / "other.png")) is None  # no such file
    assert pasted_image_path(f"{shot}\n{shot}") is None  # two lines: text, not a drop


async def test_a_mentioned_image_goes_beside_the_words(tmp_path: Path) -> None:
    (tmp_path / "ui").mkdir()
    (tmp_path / "ui/bug.png").write_bytes(png(40, 30))
    outside = tmp_path.parent / f"{tmp_path.name}-pictures"
    outside.mkdir()
    (outside / "s.jpg").write_bytes(png(8, 8, fmt="JPEG"))
    text = f"why is @ui/bug.png broken, see also @{outside}/s.jpg"
    mentions = await read_mentions(tmp_path, text, limits_for("openai"))
    assert mentions.problems == () and mentions.missing == ()
    first, second = mentions.attachments
    assert first.source == "@ui/bug.png · 40×30 · 1 KB"
    assert first.text == "image bug.png (image/png, 40×30)"
    assert second.image is not None and second.image.media_type == "image/jpeg"
    sent = attach("why", mentions.attachments)
    assert '<context source="@ui/bug.png · 40×30 · 1 KB">' in sent
    assert images_of(mentions.attachments) == (first.image, second.image)


async def test_an_image_that_cannot_be_attached_is_a_problem_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "fake.png").write_text("plain text")
    mentions = await read_mentions(tmp_path, "see @fake.png", limits_for("anthropic"))
    assert mentions.attachments == ()
    (problem,) = mentions.problems
    assert problem.startswith("fake.png is not an image that can be read")
