"""A unified diff drawn for reading: old and new line numbers, added lines green, removed red."""

from __future__ import annotations

import re

from rich.text import Text

_HUNK = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def render_diff(diff: str) -> Text:
    """Every line of `diff`, each after a gutter with its old and new line numbers."""
    lines = diff.splitlines()
    width = len(str(_largest_line_number(lines))) if lines else 1
    blank = " " * width
    old = new = 0
    text = Text(no_wrap=True, overflow="ellipsis")
    for line in lines:
        if (hunk := _HUNK.match(line)) is not None:
            old, new = int(hunk.group(1)), int(hunk.group(2))
            text.append(f"{blank} {blank} ", style="dim")
            text.append(line, style="cyan")
        elif line.startswith(("---", "+++", "diff ", "index ")):
            text.append(f"{blank} {blank} ", style="dim")
            text.append(line, style="bold")
        elif line.startswith("+"):
            text.append(f"{blank} {new:>{width}} ", style="dim")
            text.append(line, style="green")
            new += 1
        elif line.startswith("-"):
            text.append(f"{old:>{width}} {blank} ", style="dim")
            text.append(line, style="red")
            old += 1
        else:
            text.append(f"{old:>{width}} {new:>{width}} ", style="dim")
            text.append(line)
            old, new = old + 1, new + 1
        text.append("\n")
    text.rstrip()
    return text


def _largest_line_number(lines: list[str]) -> int:
    """An upper bound of the numbers the gutter will show: each hunk's start plus its length."""
    largest, at = 1, 0
    for line in lines:
        if (hunk := _HUNK.match(line)) is not None:
            at = max(int(hunk.group(1)), int(hunk.group(2)))
        elif not line.startswith(("---", "+++")):
            at += 1
        largest = max(largest, at)
    return largest
