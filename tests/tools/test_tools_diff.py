"""Diffs of an edit as git shows them: no line is junk, however often it occurs in the file."""

from __future__ import annotations

import difflib
import re

import pytest

from tui_agent.tools import unified_diff


def patched(before: str, diff: str) -> str:
    """`before` with the unified `diff` applied (to check a diff says exactly the change)."""
    old = before.splitlines(keepends=True)
    out: list[str] = []
    at, last = 0, ""
    for line in diff.splitlines(keepends=True)[2:]:
        hunk = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", line)
        if hunk:
            start, count = int(hunk.group(1)), int(hunk.group(2) or 1)
            begin = start - 1 if count else start
            out += old[at:begin]
            at = begin
        elif line.startswith("\\"):
            if last in " +":  # the line before has no newline in the new text
                out[-1] = out[-1].removesuffix("\n")
        elif line.startswith(" "):
            out.append(line[1:])
            at += 1
        elif line.startswith("+"):
            out.append(line[1:])
        elif line.startswith("-"):
            at += 1
        last = line[:1]
    return "".join(out + old[at:])


def source(lines: int) -> str:
    """A long file whose blank lines and closing braces occur far more than 1% of the time."""
    body = []
    for n in range(lines):
        body.append("" if n % 7 == 0 else "}" if n % 11 == 0 else f"value_{n} = compute({n})")
    return "\n".join(body) + "\n"


def test_a_one_line_change_in_a_repetitive_file_is_one_line_of_diff() -> None:
    before = "x = 0\n" * 2000
    after = "x = 0\n" * 1000 + "y = 1\n" + "x = 0\n" * 999
    diff = unified_diff(before, after, "f.py")
    changed = [ln for ln in diff.splitlines()[2:] if ln[:1] in "+-"]
    assert changed == ["-x = 0", "+y = 1"]
    noisy = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm=""))
    assert len(noisy) > 100  # what difflib's autojunk made of it


def test_moving_a_block_pairs_blank_lines_as_git_does() -> None:
    before = source(3000)
    lines = before.splitlines(keepends=True)
    after = "".join(lines[:900] + lines[1200:2400] + lines[900:1200] + lines[2400:])
    diff = unified_diff(before, after, "f.py")
    assert patched(before, diff) == after
    removed = sum(1 for ln in diff.splitlines()[2:] if ln.startswith("-"))
    assert removed == 300  # the moved block, nothing else


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("", "a\nb\n"),
        ("a\nb\n", ""),
        ("a\nb", "a\nc"),
        ("same\n", "same\n"),
        ("".join(f"{n}\n" for n in range(50)), "".join(f"{n}\n" for n in range(50) if n % 7)),
    ],
)
def test_the_diff_applies_back_to_the_new_text(before: str, after: str) -> None:
    diff = unified_diff(before, after, "f")
    assert patched(before, diff) == after
    if before == after:
        assert diff == ""
    else:
        assert diff.startswith("--- a/f\n+++ b/f\n@@ ")


def test_a_small_diff_reads_as_difflib_writes_it() -> None:
    before = "".join(f"line {n}\n" for n in range(30))
    after = before.replace("line 10\n", "line ten\n").replace("line 25\n", "")
    expected = "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile="a/f",
            tofile="b/f",
        )
    )
    assert unified_diff(before, after, "f") == expected
