"""Walking the workspace the way git sees it: glob patterns, `.gitignore` rules, no `.git/`.

`glob_regex` turns a glob (`*`, `?`, `[...]`, `**` for any number of directories, `{a,b}`) into
a regular expression over `/`-separated relative paths. `IgnoreFile` holds one `.gitignore`'s
rules (negation, directory-only, anchored and floating patterns); `walk_files` yields the files
under a directory in sorted order, applying every `.gitignore` from the workspace root down, last
match winning and deeper files overriding shallower ones, as git does. Symlinked directories are
never followed, a symlinked file counts only when it points inside the workspace, and special
files (FIFOs, sockets, devices) are skipped.

Everything here is synchronous; the tools run it in a worker thread.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass


def _class_end(pattern: str, start: int) -> int:
    """Index of the `]` closing the class opened at `start`, or -1."""
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 1
    return i if i < len(pattern) else -1


def _brace_end(pattern: str, start: int) -> int:
    depth = 0
    for i in range(start, len(pattern)):
        if pattern[i] == "{":
            depth += 1
        elif pattern[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _split_top(body: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in body:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += char == "{"
        depth -= char == "}"
        current.append(char)
    parts.append("".join(current))
    return parts


def glob_regex(pattern: str, *, braces: bool = True) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            whole_segment = (i == 0 or pattern[i - 1] == "/") and (j == n or pattern[j] == "/")
            if j - i >= 2 and whole_segment:
                if j == n:
                    out.append(".*")
                else:
                    out.append("(?:[^/]*/)*")
                    j += 1  # the slash belongs to the "any directories" part
            else:
                out.append("[^/]*")
            i = j
            continue
        if char == "?":
            out.append("[^/]")
        elif char == "[" and (end := _class_end(pattern, i)) != -1:
            body = pattern[i + 1 : end]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end
        elif char == "{" and braces and (end := _brace_end(pattern, i)) != -1:
            options = _split_top(pattern[i + 1 : end])
            out.append("(?:" + "|".join(glob_regex(o, braces=True) for o in options) + ")")
            i = end
        elif char == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 1
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    anchored: bool  # matched against the path below the .gitignore's folder, else the name


def _parse_line(line: str) -> _Rule | None:
    line = line.rstrip("\r\n")
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "  # "\\ " keeps one escaped trailing space
    line = stripped
    if not line or line.startswith("#"):
        return None
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    regex = re.compile(glob_regex(line, braces=False))
    return _Rule(regex, negate, dir_only, anchored)


@dataclass(frozen=True)
class IgnoreFile:
    base: str  # folder holding the .gitignore, relative to the workspace root ("" = root)
    rules: tuple[_Rule, ...]

    @classmethod
    def parse(cls, text: str, base: str) -> IgnoreFile:
        rules = (_parse_line(line) for line in text.splitlines())
        return cls(base, tuple(rule for rule in rules if rule is not None))

    def verdict(self, rel: str, is_dir: bool) -> bool | None:
        """True ignored, False re-included, None when no rule speaks about `rel`."""
        if self.base:
            if not rel.startswith(self.base + "/"):
                return None
            rel = rel[len(self.base) + 1 :]
        name = rel.rpartition("/")[2]
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.fullmatch(rel if rule.anchored else name):
                return not rule.negate
        return None


def _ignored(stack: list[IgnoreFile], rel: str, is_dir: bool) -> bool:
    for ignore in reversed(stack):  # deeper files override shallower ones
        verdict = ignore.verdict(rel, is_dir)
        if verdict is not None:
            return verdict
    return False


def _load(folder: str, rel: str) -> IgnoreFile | None:
    try:
        with open(os.path.join(folder, ".gitignore"), encoding="utf-8", errors="replace") as fh:
            return IgnoreFile.parse(fh.read(), rel)
    except OSError:
        return None


def _relative(path: str, root: str) -> str:
    return "" if path == root else os.path.relpath(path, root).replace(os.sep, "/")


def walk_files(
    top: str, root: str, should_stop: Callable[[], bool] = lambda: False
) -> Iterator[tuple[str, str]]:
    """(absolute path, path relative to `root`) of every file under `top` git would not ignore.

    `top` and `root` are real paths and `top` lies inside `root`. The `.gitignore` files of the
    folders between `root` and `top` apply too. Files come sorted by path, folder by folder
    (the order of `rel.split("/")`)."""
    stack: list[IgnoreFile] = []
    rel_top = _relative(top, root)
    folder, parts = root, [p for p in rel_top.split("/") if p]
    for index in range(len(parts) + 1):
        if index:
            folder = os.path.join(folder, parts[index - 1])
        if (ignore := _load(folder, "/".join(parts[:index]))) is not None:
            stack.append(ignore)
    yield from _walk(top, rel_top, root, stack, should_stop)


def _walk(
    folder: str, rel: str, root: str, stack: list[IgnoreFile], should_stop: Callable[[], bool]
) -> Iterator[tuple[str, str]]:
    if should_stop():
        return
    try:
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda e: e.name)
    except OSError:
        return
    pushed = False
    if rel and (ignore := _load(folder, rel)) is not None:
        stack.append(ignore)
        pushed = True
    try:
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir and entry.name == ".git":
                continue
            if is_link:
                real = os.path.realpath(entry.path)
                if is_dir or not os.path.isfile(real) or not _within(real, root):
                    continue
            elif not is_dir and not entry.is_file(follow_symlinks=False):
                continue  # FIFOs, sockets, devices: reading one could block or never end
            if _ignored(stack, child, is_dir):
                continue
            if is_dir:
                yield from _walk(entry.path, child, root, stack, should_stop)
            else:
                yield entry.path, child
    finally:
        if pushed:
            stack.pop()


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
