"""No module in `tui_agent/` is over 500 lines unless its first lines say why it must be one piece,
and a size note at the top of a module (`about 700 lines`, `One piece (620 lines): ...`) is within
10 % of the module's real length, so the first thing a reader is told stays true."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tui_agent"
LIMIT = 500
HEAD_LINES = 15  # where the reason and any size note must be
# "One piece (620 lines): <why>" is the reason a long module gives; the other phrasings are size
# notes as they have been written here, checked for truth the same way.
ONE_PIECE = re.compile(r"One piece \(([\d,]+) lines\):")
SIZE_NOTE = re.compile(
    r"\b(?:about|a little over|over|nearly|under|some|One piece \()\s*([\d,]+)\s+lines\b",
    re.IGNORECASE,
)


def _modules() -> list[tuple[str, list[str]]]:
    return [
        (path.relative_to(PACKAGE).as_posix(), path.read_text(encoding="utf-8").splitlines())
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def test_a_module_over_the_limit_says_why_it_is_one_piece() -> None:
    unexplained = [
        f"{name}: {len(lines)} lines"
        for name, lines in _modules()
        if len(lines) > LIMIT and not ONE_PIECE.search("\n".join(lines[:HEAD_LINES]))
    ]
    assert not unexplained, (
        f"over {LIMIT} lines with no 'One piece (N lines): why' in the first {HEAD_LINES} "
        f"lines: {unexplained}"
    )


def test_every_size_note_is_within_ten_percent_of_the_truth() -> None:
    wrong = [
        f"{name}: says {stated}, has {len(lines)}"
        for name, lines in _modules()
        for stated in SIZE_NOTE.findall("\n".join(lines[:HEAD_LINES]))
        if abs(int(stated.replace(",", "")) - len(lines)) > 0.1 * len(lines)
    ]
    assert not wrong, wrong
