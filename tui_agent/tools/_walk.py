"""Walking the workspace the way git sees it: glob patterns, `.gitignore` rules, no `.git/`.

`glob_regex` turns a glob (`*`, `?`, `[...]`, `**` for any number of directories, `{a,b}`) into
a regular expression over `/`-separated relative paths. `IgnoreFile` holds one folder's ignore
rules, read by pathspec with git's semantics (negation, directory-only, anchored and floating
patterns); `walk_files` yields the files under a directory in sorted order, applying
`.git/info/exclude`, then every `.gitignore` and `.ignore` from the workspace root down, last
match winning and deeper files overriding shallower ones, as git and ripgrep do. Symlinked
directories are never followed, a symlinked file counts only when it points inside the
workspace, and special files (FIFOs, sockets, devices) are skipped.

Everything here is synchronous; the tools run it in a worker thread.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from tui_agent.lazy_dataclass import dataclass

if TYPE_CHECKING:
    import pathspec


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


IGNORE_FILES = (".gitignore", ".ignore")  # per folder; a later file's rules win
ROOT_EXCLUDE = ".git/info/exclude"  # the repository's own, below every .gitignore


@dataclass(frozen=True)
class IgnoreFile:
    """The ignore rules of one folder, in gitignore syntax (pathspec's git semantics)."""

    base: str  # folder holding the rules, relative to the workspace root ("" = root)
    spec: pathspec.GitIgnoreSpec

    @classmethod
    def parse(cls, text: str, base: str) -> IgnoreFile:
        import pathspec  # loaded by the first walk, not by every start-up

        return cls(base, pathspec.GitIgnoreSpec.from_lines(text.splitlines()))

    def verdict(self, rel: str, is_dir: bool) -> bool | None:
        """True ignored, False re-included, None when no rule speaks about `rel`."""
        if self.base:
            if not rel.startswith(self.base + "/"):
                return None
            rel = rel[len(self.base) + 1 :]
        return self.spec.check_file(rel + "/" if is_dir else rel).include


def _ignored(stack: list[IgnoreFile], rel: str, is_dir: bool) -> bool:
    for ignore in reversed(stack):  # deeper files override shallower ones
        verdict = ignore.verdict(rel, is_dir)
        if verdict is not None:
            return verdict
    return False


def _load(folder: str, rel: str) -> IgnoreFile | None:
    """The rules that apply from `folder` down: `.git/info/exclude` (at the root), then
    `.gitignore`, then `.ignore`, as ripgrep reads them."""
    names = (ROOT_EXCLUDE, *IGNORE_FILES) if not rel else IGNORE_FILES
    texts: list[str] = []
    for name in names:
        try:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as file:
                texts.append(file.read())
        except OSError:
            continue
    return IgnoreFile.parse("\n".join(texts), rel) if texts else None


def _relative(path: str, root: str) -> str:
    return "" if path == root else os.path.relpath(path, root).replace(os.sep, "/")


def walk_order(rel: str) -> str:
    """A sort key that puts `/`-separated paths in the order `walk_files` yields them, folder
    by folder (the order of `rel.split("/")`, but cheaper): NUL, which no name holds, sorts
    below every character, as the end of a name must."""
    return rel.replace("/", "\0")


def walk_files(
    top: str, root: str, should_stop: Callable[[], bool] = lambda: False
) -> Iterator[tuple[str, str]]:
    """(absolute path, path relative to `root`) of every file under `top` git would not ignore.

    `top` and `root` are real paths and `top` lies inside `root`. The `.gitignore` files of the
    folders between `root` and `top` apply too. Files come sorted by path, folder by folder
    (the order `walk_order` gives)."""
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
