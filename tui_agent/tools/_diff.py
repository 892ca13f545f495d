"""Unified diffs of a file's text before and after a write or an edit, as git would show them.

`difflib.unified_diff` treats a line found in more than 1% of a file of 200 lines or more (blank
lines, a lone `}`) as junk that cannot anchor a match, so in long files its hunks pair unrelated
lines and grow noisier than git's. Here the lines both texts share at the start and the end are
set aside first (an edit is usually a small middle), and the middle is matched with that
heuristic off. Only when the middle is big and repetitive enough that the exact matching would
take long (its count of equal line pairs is over `EXACT_PAIRS`, e.g. a whole rewrite of a
file of thousands of identical lines) is the heuristic used again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from difflib import SequenceMatcher

CONTEXT = 3  # unchanged lines around each change, as git and diff -u show
# Pairs of equal lines the exact matcher may compare. Measured on Python-like files: an edit in
# a 5,000-line file takes 2 ms (difflib: 22 ms), two changes 2,000 lines apart 130 ms, and the
# worst case under this budget (a rewrite of a 2,500-line file) 0.3 s, in a worker thread.
EXACT_PAIRS = 200_000

Opcode = tuple[str, int, int, int, int]


def unified_diff(before: str, after: str, path: str) -> str:
    """The change from `before` to `after` in unified format, `a/path` and `b/path` headers;
    empty when nothing changed."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    hunks = list(_hunks(_opcodes(old, new)))
    if not hunks:
        return ""
    out = [f"--- a/{path}\n", f"+++ b/{path}\n"]
    for hunk in hunks:
        first, last = hunk[0], hunk[-1]
        old_range = _range(first[1], last[2])
        new_range = _range(first[3], last[4])
        out.append(f"@@ -{old_range} +{new_range} @@\n")
        for tag, i1, i2, j1, j2 in hunk:
            if tag == "equal":
                out += [" " + line for line in old[i1:i2]]
                continue
            out += ["-" + line for line in old[i1:i2]]
            out += ["+" + line for line in new[j1:j2]]
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out
    )


def _opcodes(old: Sequence[str], new: Sequence[str]) -> list[Opcode]:
    """difflib's opcodes over the whole texts, the shared head and tail set aside first."""
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    mid_old, mid_new = old[head : len(old) - tail], new[head : len(new) - tail]
    counts = Counter(mid_new)
    pairs = sum(counts[line] for line in mid_old)
    matcher = SequenceMatcher(None, mid_old, mid_new, autojunk=pairs > EXACT_PAIRS)
    ops: list[Opcode] = []
    if head:
        ops.append(("equal", 0, head, 0, head))
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" and not (i2 - i1):
            continue  # difflib's lone empty match of two empty middles
        ops.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        i, j = len(old) - tail, len(new) - tail
        ops.append(("equal", i, len(old), j, len(new)))
    return _merged(ops)


def _merged(ops: list[Opcode]) -> list[Opcode]:
    """Neighbouring equal runs joined (the head or tail next to an equal run of the middle)."""
    merged: list[Opcode] = []
    for op in ops:
        if merged and op[0] == "equal" and merged[-1][0] == "equal":
            tag, i1, _, j1, _ = merged[-1]
            merged[-1] = (tag, i1, op[2], j1, op[4])
        else:
            merged.append(op)
    return merged


def _hunks(ops: list[Opcode]) -> Iterator[list[Opcode]]:
    """The changes grouped into hunks with `CONTEXT` lines around them (what difflib's
    `get_grouped_opcodes` does, over opcodes it did not make)."""
    if not any(tag != "equal" for tag, *_ in ops):
        return
    ops = list(ops)
    if ops[0][0] == "equal":
        tag, i1, i2, j1, j2 = ops[0]
        ops[0] = (tag, max(i1, i2 - CONTEXT), i2, max(j1, j2 - CONTEXT), j2)
    if ops[-1][0] == "equal":
        tag, i1, i2, j1, j2 = ops[-1]
        ops[-1] = (tag, i1, min(i2, i1 + CONTEXT), j1, min(j2, j1 + CONTEXT))
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal" and i2 - i1 > 2 * CONTEXT:
            group.append((tag, i1, i1 + CONTEXT, j1, j1 + CONTEXT))
            yield group
            group = []
            i1, j1 = i2 - CONTEXT, j2 - CONTEXT
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _range(start: int, stop: int) -> str:
    """A hunk's line range as unified format writes it: `first,count` (1-based; a count of
    one left out, an empty range named by the line before it)."""
    count = stop - start
    if count == 1:
        return str(start + 1)
    return f"{start if count == 0 else start + 1},{count}"
