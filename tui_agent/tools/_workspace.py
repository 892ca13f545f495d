"""Workspace confinement: every path a model names is resolved and must stay inside the root.

A path is taken relative to the workspace root (an absolute path is accepted only when it lands
inside), resolved with symlinks followed component by component (so `link/..` and links to the
outside are judged where they really point), and refused unless the result is the root or below
it. `~` is never expanded and NUL bytes are refused outright. Extra roots (the session's spill
folder) may be given for reading only.

The check is made when a tool starts; a link swapped in by another process between the check and
the open is outside what this guards against.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path


class WorkspaceError(ValueError):
    """A path the tool refuses; the message is written for the model and shown as the result."""


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep)


class Workspace:
    def __init__(self, root: Path | str, *, readable: Sequence[Path | str] = ()) -> None:
        self._root = os.path.realpath(os.fspath(root))
        self._readable = tuple(os.path.realpath(os.fspath(extra)) for extra in readable)

    @property
    def root(self) -> Path:
        return Path(self._root)

    @property
    def readable_roots(self) -> tuple[Path, ...]:
        return tuple(Path(extra) for extra in self._readable)

    def resolve(self, path: str, *, write: bool = False) -> Path:
        """The real path `path` names, or `WorkspaceError` if it leaves the allowed roots."""
        if "\x00" in path:
            raise WorkspaceError(f"Path {path!r} contains a NUL byte; refused.")
        if path.startswith("~"):
            raise WorkspaceError(
                f'Path "{path}" starts with "~", which is not expanded here. Use a path relative '
                f"to the workspace root ({self._root})."
            )
        joined = os.path.join(self._root, path) if path else self._root
        real = os.path.realpath(joined)
        if _within(real, self._root):
            return Path(real)
        if not write and any(_within(real, extra) for extra in self._readable):
            return Path(real)
        if write and any(_within(real, extra) for extra in self._readable):
            raise WorkspaceError(f'Path "{path}" is readable only; writing there is refused.')
        raise WorkspaceError(
            f'Path "{path}" is outside the workspace ({self._root}); access refused. '
            "Use a path inside the workspace."
        )

    def contains(self, real_path: str | Path) -> bool:
        """Whether an already resolved path is inside the root (used when walking trees)."""
        return _within(os.fspath(real_path), self._root)

    def display(self, real_path: str | Path) -> str:
        """A path as the model should see it: relative to the root, absolute elsewhere."""
        text = os.fspath(real_path)
        if text == self._root:
            return "."
        if _within(text, self._root):
            return os.path.relpath(text, self._root)
        return text
