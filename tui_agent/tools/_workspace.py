"""Workspace confinement: every path a model names is resolved and must stay inside the root.

A path is taken relative to the workspace root (an absolute path is accepted only when it lands
inside), resolved with symlinks followed component by component (so `link/..` and links to the
outside are judged where they really point), and refused unless the result is the root or below
it. `~` is never expanded and NUL bytes are refused outright. Extra roots (the session's spill
folder) may be given for reading only.

The file tools then open what `resolve` returned without trusting names again: `open_dir` and
`open_file` walk from the root's directory descriptor one component at a time with
`O_NOFOLLOW`. The resolved path holds no links, so a link found on the way was swapped in after
the check (another process racing the tool) and the open is refused: a swapped link is never
followed outside. `open_file` refuses anything but a regular file (FIFOs, devices, sockets)
without blocking on it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO never blocks
_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


class WorkspaceError(ValueError):
    """A path the tool refuses; the message is written for the model and shown as the result."""


def file_kind(mode: int) -> str | None:
    """What a non-regular file is, in words ("a FIFO (named pipe)"); None for a regular file."""
    return None if stat.S_ISREG(mode) else _KINDS.get(stat.S_IFMT(mode), "a special file")


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

    def open_dir(self, real_path: str | Path, *, create: bool = False) -> int:
        """A descriptor of the resolved folder `real_path`, reached from its root without
        following any link; `create` makes missing folders on the way. The caller closes it."""
        text = os.fspath(real_path)
        root = next((r for r in (self._root, *self._readable) if _within(text, r)), None)
        if root is None:
            raise WorkspaceError(f'Path "{text}" is outside the workspace; access refused.')
        parts = [] if text == root else os.path.relpath(text, root).split(os.sep)
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for part in parts:
                child = _open_child_dir(fd, part, create, self.display(text))
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    def open_file(self, real_path: str | Path, shown: str) -> int:
        """A read-only descriptor of the resolved regular file `real_path` (see `open_dir`).

        Refuses, with a message naming `shown`, folders and special files; never blocks on a
        FIFO. FileNotFoundError when it does not exist."""
        folder = self.open_dir(os.path.dirname(os.fspath(real_path)))
        try:
            name = os.path.basename(os.fspath(real_path))
            try:
                fd = os.open(name, _FILE_FLAGS, dir_fd=folder)
            except OSError as error:
                _refuse_swapped_link(error, folder, name, shown)
                raise
        finally:
            os.close(folder)
        kind = file_kind(os.fstat(fd).st_mode)
        if kind is not None:
            os.close(fd)
            raise WorkspaceError(f"{shown} is {kind}, not a regular file; refused.")
        os.set_blocking(fd, True)
        return fd


def _open_child_dir(parent: int, name: str, create: bool, target: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
    except OSError as error:
        _refuse_swapped_link(error, parent, name, target)
        raise
    try:
        os.mkdir(name, dir_fd=parent)
    except FileExistsError:
        pass  # made meanwhile by someone else: open it (the flags still refuse a link)
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as error:
        _refuse_swapped_link(error, parent, name, target)
        raise


def _refuse_swapped_link(error: OSError, parent: int, name: str, shown: str) -> None:
    """Turn "this component is a link now" into the refusal it is; other errors pass."""
    if error.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return
    try:
        is_link = stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return
    if is_link:
        raise WorkspaceError(
            f'Path "{shown}" changed while it was being opened (a link appeared in place of '
            f'"{name}"); access refused.'
        ) from None
