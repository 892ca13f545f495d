"""The file tools' shared ground and `read_file`; `write_file` and `edit_file` are in `_edits.py`.

Reading numbers lines like `cat -n`, pages by lines (offset/limit) within a character budget
that stays under the spill threshold, cuts very long lines, refuses binary files and decodes
UTF-8 (BOM dropped, bad bytes replaced) or BOM-marked UTF-16, and refuses special files (a
FIFO never hangs it). `save_file`, which the writing tools use, writes atomically (temporary
file, fsync, rename, permissions kept). Files and folders are opened from the workspace root
without following links swapped in after the path was checked. All disk work runs in a worker
thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, ClassVar, Protocol

from pydantic import Field

from tui_agent.tools._accesses import ToolAccesses
from tui_agent.tools._base import Tool, ToolArgs, ToolContext
from tui_agent.tools._rules import path_rule_matches
from tui_agent.tools._workspace import Workspace, WorkspaceError
from tui_agent.vocab import ToolFacts, ToolResult, error_result

DEFAULT_LIMIT = 2_000
MAX_LINE_CHARS = 2_000
OUTPUT_BUDGET = 40_000  # characters per read, so one read never needs to be spilled
_SNIFF = 8_192
_CHUNK = 1 << 16  # small enough that finding the k-th newline in the last chunk is cheap
_LINE_BYTES = 4 * MAX_LINE_CHARS + 4  # enough bytes for MAX_LINE_CHARS characters of UTF-8
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class EditorFiles(Protocol):
    """Files as an editor holds them (a front end such as an ACP client): read and written
    through it, unsaved buffers included. Paths are absolute and already confined."""

    async def read_text(self, path: Path) -> str | None:
        """The file's text, or None when there is no such file."""
        ...

    async def write_text(self, path: Path, text: str) -> None: ...


class _Refused(Exception):
    """A file problem the model can act on; the message becomes the error result."""


def _decode(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


def _read_bytes(workspace: Workspace, path: Path, shown: str) -> bytes:
    """The whole file, opened without following a link swapped in since the path was checked."""
    try:
        fd = workspace.open_file(path, shown)
    except FileNotFoundError:
        raise _Refused(f"File not found: {shown}") from None
    with open(fd, "rb") as handle:
        return handle.read()


def _read_text(workspace: Workspace, path: Path, shown: str) -> tuple[str, bool]:
    """The whole file as text and whether it starts with a UTF-8 BOM, for editing: refuses
    folders and anything but UTF-8 text, since writing it back would corrupt it."""
    if path.is_dir():
        raise _Refused(f"{shown} is a directory, not a file.")
    data = _read_bytes(workspace, path, shown)
    try:
        if b"\x00" in data[:_SNIFF]:
            raise ValueError
        return data.decode("utf-8-sig"), data.startswith(b"\xef\xbb\xbf")
    except ValueError:
        raise _Refused(
            f"{shown} is not UTF-8 text; edit_file would corrupt it. Use the shell to change it."
        ) from None


def save_file(workspace: Workspace, path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace the file at the resolved `path` with `data`, atomically: a reader (or a crash)
    sees the old content or the new, never a mix or an empty file.

    The data goes to a temporary file in the same folder, is fsynced, takes the permission bits
    `mode` (by default the old file's; new files get the default ones), and is renamed over the
    old name; the folder is fsynced so the rename survives a power cut. Every write of the file
    tools and of /undo goes through here. The folder is reached without following links (see
    `Workspace.open_dir`); the temporary file has a fresh random name and is created only if
    nothing, not even a link, has that name; the rename replaces a link put in the file's place
    instead of writing through it."""
    folder = workspace.open_dir(path.parent, create=True)
    temp = f".{path.name[:200]}.{secrets.token_hex(8)}.tui-agent.tmp"
    try:
        if mode is None:
            try:
                old = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
                mode = stat.S_IMODE(old.st_mode)
            except FileNotFoundError:
                pass
        fd = os.open(temp, _NEW_FILE_FLAGS, 0o666, dir_fd=folder)
        try:
            with open(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                if mode is not None:
                    os.fchmod(handle.fileno(), mode)
                os.fsync(handle.fileno())
            os.rename(temp, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=folder)
            raise
        os.fsync(folder)
    finally:
        os.close(folder)


def _skip_lines(handle: BinaryIO, count: int) -> int:
    """Move past `count` lines; fewer when the file ends first (a last line without its
    newline still counts). Returns how many lines were passed."""
    skipped = 0
    last_byte = b"\n"
    while skipped < count:
        chunk = handle.read(_CHUNK)
        if not chunk:
            return skipped + (last_byte != b"\n")
        newlines = chunk.count(b"\n")
        if skipped + newlines < count:
            skipped += newlines
            last_byte = chunk[-1:]
            continue
        position = -1
        for _ in range(count - skipped):
            position = chunk.index(b"\n", position + 1)
        handle.seek(position + 1 - len(chunk), os.SEEK_CUR)
        return count
    return skipped


def _utf8_lines(handle: BinaryIO) -> Iterator[str]:
    """Lines without their ending; an overlong line keeps only its start (never read whole)."""
    while raw := handle.readline(_LINE_BYTES):
        if not raw.endswith(b"\n"):
            while (rest := handle.readline(_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
        yield raw.decode("utf-8", errors="replace").rstrip("\r\n")


# --- read_file ---------------------------------------------------------------------------------


class ReadFileArgs(ToolArgs):
    path: str = Field(description="File path, relative to the workspace root.")
    offset: int | None = Field(
        default=None, ge=1, description="First line to show (1-based). Default 1."
    )
    limit: int | None = Field(
        default=None, ge=1, description=f"How many lines to show. Default {DEFAULT_LIMIT}."
    )


def _numbered(number: int, line: str) -> str:
    if len(line) > MAX_LINE_CHARS:
        line = line[:MAX_LINE_CHARS] + f"... [line cut at {MAX_LINE_CHARS} characters]"
    return f"{number:>6}\t{line}"


def _read_window(workspace: Workspace, path: Path, shown: str, offset: int, limit: int) -> str:
    if path.is_dir():
        raise _Refused(f"{shown} is a directory; use glob to list its files.")
    try:
        fd = workspace.open_file(path, shown)
    except FileNotFoundError:
        raise _Refused(f"File not found: {shown}") from None
    with open(fd, "rb") as handle:
        head = handle.read(_SNIFF)
        size = os.fstat(handle.fileno()).st_size
        if not head:
            return f"{shown} is empty."
        first = 1
        lines: Iterator[str]
        if head.startswith((b"\xff\xfe", b"\xfe\xff")):
            # UTF-16 has NUL bytes everywhere; decode it whole (such files are small in practice)
            lines = iter((head + handle.read()).decode("utf-16", errors="replace").splitlines())
        elif b"\x00" in head:
            raise _Refused(f"{shown} is a binary file ({size} bytes); read_file shows text only.")
        else:
            handle.seek(0)
            first = _skip_lines(handle, offset - 1) + 1  # fast: counts newlines in big chunks
            lines = _utf8_lines(handle)
        return _window(lines, first, shown, size, offset, limit)


def _window(
    lines: Iterator[str], first: int, shown: str, size: int, offset: int, limit: int
) -> str:
    """Lines `offset`.. of a file (`lines` starts at line `first`), numbered and bounded."""
    out: list[str] = []
    used = 0
    number = first - 1
    for number, line in enumerate(lines, first):
        if number == 1:
            line = line.removeprefix("\ufeff")
        if number < offset:
            continue
        if len(out) == limit or (out and used + len(line) > OUTPUT_BUDGET):
            last = offset + len(out) - 1
            out.append(
                f"\n[Showing lines {offset}-{last} of {shown} ({size} bytes); the file goes "
                f"on. Read more with offset={last + 1}.]"
            )
            return "\n".join(out)
        text = _numbered(number, line)
        out.append(text)
        used += len(text) + 1
    if not out:
        raise _Refused(f"{shown} has {number} lines; offset {offset} is past the end of the file.")
    return "\n".join(out)


def _editor_window(text: str | None, shown: str, offset: int, limit: int) -> str:
    """The same window over a file's text as the editor holds it."""
    if text is None:
        raise _Refused(f"File not found: {shown}")
    if not text:
        return f"{shown} is empty."
    size = len(text.encode("utf-8", errors="replace"))
    return _window(iter(text.splitlines()), 1, shown, size, offset, limit)


class ReadFile(Tool[ReadFileArgs]):
    name = "read_file"
    facts = ToolFacts(
        kind="read",
        verb="Read",
        primary_arg="path",
        advice="read_file: read a file before you change it or make claims about it; use "
        "offset and limit for large files.",
    )
    description = (
        "Read a text file from the workspace. Lines come numbered like `cat -n` (number, tab, "
        f"text). Shows up to {DEFAULT_LIMIT} lines from `offset` (1-based); long files say how to "
        f"read on. Lines over {MAX_LINE_CHARS} characters are cut. Binary files are refused. "
        "Also reads the saved full output of earlier tool calls (their output_path)."
    )
    Args = ReadFileArgs
    read_only: ClassVar[bool] = True

    def __init__(self, workspace: Workspace, files: EditorFiles | None = None) -> None:
        self.workspace = workspace
        self.files = files

    def accesses(self, args: ReadFileArgs) -> ToolAccesses:
        try:
            return ToolAccesses.read_file(str(self.workspace.resolve(args.path)))
        except WorkspaceError:
            return ToolAccesses.none()

    def matches_rule(self, pattern: str, args: ReadFileArgs) -> bool:
        return path_rule_matches(pattern, args.path, self.workspace.root)

    def describe(self, args: ReadFileArgs) -> str:
        return args.path

    async def execute(self, args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
        try:
            path = self.workspace.resolve(args.path)
            offset, limit = args.offset or 1, args.limit or DEFAULT_LIMIT
            if self.files is not None and self.workspace.contains(path):
                held = await self.files.read_text(path)
                text = _editor_window(held, args.path, offset, limit)
            else:
                text = await asyncio.to_thread(
                    _read_window, self.workspace, path, args.path, offset, limit
                )
        except (WorkspaceError, _Refused) as error:
            return error_result(str(error))
        return ToolResult(output=text)
