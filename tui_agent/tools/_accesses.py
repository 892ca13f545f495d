"""What a tool call touches, and when two calls must not run at the same time.

A call declares `ToolAccesses`: nothing, everything (`all`), a set of file accesses (read,
write, readwrite or search, on one file or a whole tree), or `delegated`: it touches nothing
itself and hands its work to calls that are scheduled on their own (a sub-agent's `task`).
Two calls conflict when either touches everything, or when one side writes and their paths
overlap; a delegated call conflicts with nothing, not even with `all`, because the calls it
waits for must be able to run beside it. Paths are compared after a
deliberately conservative normalisation (lower-cased even on case-sensitive file systems), so a
false conflict only costs parallelism, never correctness.
"""

from __future__ import annotations

import re
from typing import Literal

from tui_agent.lazy_dataclass import dataclass

FileOp = Literal["read", "write", "readwrite", "search"]
AccessKind = Literal["none", "all", "files", "delegated"]

_SLASH_RUNS = re.compile(r"/{2,}")


def normalize_path(path: str) -> str:
    """Backslashes to slashes, runs of slashes folded, lower-cased, one trailing slash dropped."""
    folded = _SLASH_RUNS.sub("/", path.replace("\\", "/")).lower()
    if len(folded) > 1 and folded.endswith("/"):
        folded = folded[:-1]
    return folded


@dataclass(frozen=True)
class FileAccess:
    op: FileOp
    path: str  # already normalised
    recursive: bool = False

    @property
    def writes(self) -> bool:
        return self.op in ("write", "readwrite")


@dataclass(frozen=True)
class ToolAccesses:
    kind: AccessKind
    files: tuple[FileAccess, ...] = ()

    @classmethod
    def none(cls) -> ToolAccesses:
        return cls("none")

    @classmethod
    def all(cls) -> ToolAccesses:
        return cls("all")

    @classmethod
    def delegated(cls) -> ToolAccesses:
        return cls("delegated")

    @classmethod
    def file(cls, op: FileOp, path: str, *, recursive: bool = False) -> ToolAccesses:
        return cls("files", (FileAccess(op, normalize_path(path), recursive),))

    @classmethod
    def read_file(cls, path: str) -> ToolAccesses:
        return cls.file("read", path)

    @classmethod
    def read_tree(cls, path: str) -> ToolAccesses:
        return cls.file("read", path, recursive=True)

    @classmethod
    def write_file(cls, path: str) -> ToolAccesses:
        return cls.file("write", path)

    @classmethod
    def write_tree(cls, path: str) -> ToolAccesses:
        return cls.file("write", path, recursive=True)

    @classmethod
    def read_write_file(cls, path: str) -> ToolAccesses:
        return cls.file("readwrite", path)

    @classmethod
    def read_write_tree(cls, path: str) -> ToolAccesses:
        return cls.file("readwrite", path, recursive=True)

    @classmethod
    def search_tree(cls, path: str) -> ToolAccesses:
        return cls.file("search", path, recursive=True)

    def __or__(self, other: ToolAccesses) -> ToolAccesses:
        """Both sets of accesses at once (`all` absorbs everything, `none` and `delegated` add
        nothing)."""
        if self.kind == "all" or other.kind == "all":
            return ToolAccesses.all()
        if self.kind in ("none", "delegated"):
            return other
        if other.kind in ("none", "delegated"):
            return self
        return ToolAccesses("files", self.files + other.files)


def _contains(tree: FileAccess, other: FileAccess) -> bool:
    if not tree.recursive:
        return False
    prefix = tree.path if tree.path.endswith("/") else tree.path + "/"
    return other.path.startswith(prefix)


def _overlap(a: FileAccess, b: FileAccess) -> bool:
    return a.path == b.path or _contains(a, b) or _contains(b, a)


def conflict(a: ToolAccesses, b: ToolAccesses) -> bool:
    """True when the two calls must not run at the same time."""
    if a.kind == "delegated" or b.kind == "delegated":
        return False
    if a.kind == "all" or b.kind == "all":
        return True
    if a.kind == "none" or b.kind == "none":
        return False
    return any((x.writes or y.writes) and _overlap(x, y) for x in a.files for y in b.files)
