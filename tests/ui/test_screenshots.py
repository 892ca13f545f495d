"""The README's screenshots show what the app shows now: each `screenshots/NAME.svg` must hold,
row for row, the same terminal text as the reviewed snapshot of scene NAME. Both are drawings of
the same scene (`scenes.py`), written by different exporters (`make screenshots` and the
snapshot plugin), so the SVG markup differs and the text is what is compared."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from tests.ui.scenes import SCENES

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "screenshots"
SNAPSHOTS = Path(__file__).parent / "__snapshots__" / "test_snapshots"
CELL = 12.2  # the width of one terminal cell in Rich's SVG export
_TEXT = re.compile(
    r'<text class="[^"]*" x="([\d.]+)" y="[\d.]+" textLength="[\d.]+" '
    r'clip-path="url\(#terminal-(?:\d+-)?line-(\d+)\)">(.*?)</text>',
    re.DOTALL,
)


def rows(svg: str) -> list[str]:
    """The terminal's text, one string per row, as the SVG draws it."""
    cells: dict[int, dict[int, str]] = {}
    for x, line, text in _TEXT.findall(svg):
        row = cells.setdefault(int(line), {})
        for offset, char in enumerate(html.unescape(text).replace("\xa0", " ")):
            row[round(float(x) / CELL) + offset] = char
    return [
        "".join(row.get(col, " ") for col in range(max(row, default=-1) + 1)).rstrip()
        for _, row in sorted(cells.items())
    ]


def test_every_scene_has_a_screenshot_and_every_screenshot_a_scene() -> None:
    assert {p.stem for p in SCREENSHOTS.glob("*.svg")} == set(SCENES)


@pytest.mark.parametrize("name", sorted(SCENES))
def test_the_screenshot_shows_what_the_snapshot_shows(name: str) -> None:
    shot = rows((SCREENSHOTS / f"{name}.svg").read_text(encoding="utf-8"))
    snapshot = SNAPSHOTS / f"test_scene_looks_as_reviewed[{name}].svg"
    reviewed = rows(snapshot.read_text(encoding="utf-8"))
    assert reviewed, "no terminal text found in the snapshot: has the SVG format changed?"
    assert shot == reviewed, f"screenshots/{name}.svg is out of date: run `make screenshots`"
