"""The file tools: `read_file`, `write_file` and `edit_file`.

Reading numbers lines like `cat -n`, pages by lines (offset/limit) within a character budget
that stays under the spill threshold, cuts very long lines, refuses binary files and decodes
UTF-8 (BOM dropped, bad bytes replaced) or BOM-marked UTF-16, and refuses special files (a
FIFO never hangs it). Writing creates parent folders; editing replaces one exact, unique match
(or every match with `replace_all`). Both write through `save_file`, atomically (temporary
file, fsync, rename, permissions kept), and report a unified diff in `display` for the UI, the
same diff they show when asking for approval (see `_diff`). Files and folders are opened from
the workspace root without following links swapped in after the path was checked. All disk
work, and the diffs, run in a worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, ClassVar, Protocol

from pydantic import Field

from tui_agent.tools._accesses import ToolAccesses
from tui_agent.tools._base import Tool, ToolArgs, ToolContext
from tui_agent.tools._diff import unified_diff
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


# --- write_file --------------------------------------------------------------------------------


class WriteFileArgs(ToolArgs):
    path: str = Field(description="File path, relative to the workspace root.")
    content: str = Field(description="The complete new content of the file.")


def _existing_text(workspace: Workspace, path: Path, shown: str) -> str | None:
    if not path.exists():
        return None
    if path.is_dir():
        raise _Refused(f"{shown} is a directory; choose a file path.")
    return _decode(_read_bytes(workspace, path, shown))


def _write(workspace: Workspace, path: Path, shown: str, content: str) -> str | None:
    before = _existing_text(workspace, path, shown)
    save_file(workspace, path, content.encode("utf-8", errors="replace"))
    return before


class WriteFile(Tool[WriteFileArgs]):
    name = "write_file"
    facts = ToolFacts(
        kind="edit",
        verb="Write",
        primary_arg="path",
        advice="write_file: only for new files or complete rewrites.",
    )
    description = (
        "Create a file or replace its whole content. Parent folders are created. Prefer "
        "edit_file for changing part of an existing file."
    )
    Args = WriteFileArgs
    edits_files: ClassVar[bool] = True

    def __init__(self, workspace: Workspace, files: EditorFiles | None = None) -> None:
        self.workspace = workspace
        self.files = files

    def accesses(self, args: WriteFileArgs) -> ToolAccesses:
        try:
            return ToolAccesses.write_file(str(self.workspace.resolve(args.path, write=True)))
        except WorkspaceError:
            return ToolAccesses.none()

    def matches_rule(self, pattern: str, args: WriteFileArgs) -> bool:
        return path_rule_matches(pattern, args.path, self.workspace.root)

    def describe(self, args: WriteFileArgs) -> str:
        return args.path

    def written_paths(self, args: WriteFileArgs) -> tuple[str, ...]:
        return (args.path,)

    async def preview(self, args: WriteFileArgs) -> str:
        try:
            path = self.workspace.resolve(args.path, write=True)
            before = await asyncio.to_thread(_existing_text, self.workspace, path, args.path)
        except (WorkspaceError, _Refused, OSError) as error:
            return f"{args.path}: {error}"
        return await asyncio.to_thread(unified_diff, before or "", args.content, args.path)

    async def execute(self, args: WriteFileArgs, ctx: ToolContext) -> ToolResult:
        try:
            path = self.workspace.resolve(args.path, write=True)
            if self.files is not None:
                before = await self.files.read_text(path)
                await self.files.write_text(path, args.content)
            else:
                before = await asyncio.to_thread(
                    _write, self.workspace, path, args.path, args.content
                )
        except (WorkspaceError, _Refused) as error:
            return error_result(str(error))
        lines = len(args.content.splitlines())
        verb = "Created" if before is None else "Updated"
        diff = await asyncio.to_thread(unified_diff, before or "", args.content, args.path)
        return ToolResult(
            output=f"{verb} {args.path} ({lines} lines, {len(args.content)} characters).",
            display={"path": args.path, "diff": diff},
        )


# --- edit_file ---------------------------------------------------------------------------------


class EditFileArgs(ToolArgs):
    path: str = Field(description="File path, relative to the workspace root.")
    old_string: str = Field(description="The exact text to replace, whitespace included.")
    new_string: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence instead of exactly one."
    )


@dataclass(frozen=True)
class _Edit:
    before: str
    after: str
    count: int
    bom: bool  # the file starts with a UTF-8 BOM, which the texts leave out and the disk keeps


def _plan_edit(workspace: Workspace, path: Path, shown: str, args: EditFileArgs) -> _Edit:
    """The edit to make, or `_Refused` with what to do instead."""
    _check_edit(args)
    before, bom = _read_text(workspace, path, shown)
    return _edit_text(before, bom, shown, args)


def _check_edit(args: EditFileArgs) -> None:
    if args.old_string == "":
        raise _Refused("old_string is empty. To create a file or rewrite it whole, use write_file.")
    if args.old_string == args.new_string:
        raise _Refused("old_string and new_string are the same; there is nothing to change.")


def _edit_text(before: str, bom: bool, shown: str, args: EditFileArgs) -> _Edit:
    old, new = args.old_string, args.new_string
    if old not in before and "\r\n" in before and "\n" in old:
        # the model writes "\n"; the file uses CRLF: match it in the file's own line endings
        old, new = (s.replace("\r\n", "\n").replace("\n", "\r\n") for s in (old, new))
    count = before.count(old)
    if count == 0:
        raise _Refused(
            f"old_string was not found in {shown}. Read the file with read_file and copy the "
            "text exactly, including indentation and line breaks."
        )
    if count > 1 and not args.replace_all:
        raise _Refused(
            f"old_string occurs {count} times in {shown}. Include more surrounding lines so it "
            "matches exactly one place, or set replace_all to true to change every occurrence."
        )
    after = before.replace(old, new) if args.replace_all else before.replace(old, new, 1)
    return _Edit(before, after, count if args.replace_all else 1, bom)


def _apply_edit(workspace: Workspace, path: Path, shown: str, args: EditFileArgs) -> _Edit:
    edit = _plan_edit(workspace, path, shown, args)
    text = ("\ufeff" if edit.bom else "") + edit.after
    save_file(workspace, path, text.encode("utf-8", errors="replace"))
    return edit


class EditFile(Tool[EditFileArgs]):
    name = "edit_file"
    facts = ToolFacts(
        kind="edit",
        verb="Edit",
        primary_arg="path",
        advice="edit_file: for focused changes. old_string must match the file exactly "
        "(whitespace included) and be unique unless replace_all is set; include enough context.",
    )
    description = (
        "Replace text in an existing file. old_string must match the file exactly (whitespace "
        "included) and only once, unless replace_all is true. Read the file first."
    )
    Args = EditFileArgs
    edits_files: ClassVar[bool] = True

    def __init__(self, workspace: Workspace, files: EditorFiles | None = None) -> None:
        self.workspace = workspace
        self.files = files

    def accesses(self, args: EditFileArgs) -> ToolAccesses:
        try:
            return ToolAccesses.write_file(str(self.workspace.resolve(args.path, write=True)))
        except WorkspaceError:
            return ToolAccesses.none()

    def matches_rule(self, pattern: str, args: EditFileArgs) -> bool:
        return path_rule_matches(pattern, args.path, self.workspace.root)

    def describe(self, args: EditFileArgs) -> str:
        return args.path

    def written_paths(self, args: EditFileArgs) -> tuple[str, ...]:
        return (args.path,)

    async def check(self, args: EditFileArgs) -> str | None:
        try:
            await self._plan(args)
        except (WorkspaceError, _Refused, OSError) as error:
            return str(error)
        return None

    async def preview(self, args: EditFileArgs) -> str:
        try:
            edit = await self._plan(args)
        except (WorkspaceError, _Refused, OSError) as error:
            return f"{args.path}: {error}"
        return await asyncio.to_thread(unified_diff, edit.before, edit.after, args.path)

    async def _plan(self, args: EditFileArgs) -> _Edit:
        """The edit the call would make now, changing nothing; raises what refuses it."""
        path = self.workspace.resolve(args.path, write=True)
        if self.files is not None:
            return await self._plan_in_editor(path, args)
        return await asyncio.to_thread(_plan_edit, self.workspace, path, args.path, args)

    async def execute(self, args: EditFileArgs, ctx: ToolContext) -> ToolResult:
        try:
            path = self.workspace.resolve(args.path, write=True)
            if self.files is not None:
                edit = await self._edit_in_editor(path, args)
            else:
                edit = await asyncio.to_thread(_apply_edit, self.workspace, path, args.path, args)
        except (WorkspaceError, _Refused) as error:
            return error_result(str(error))
        plural = "s" if edit.count != 1 else ""
        diff = await asyncio.to_thread(unified_diff, edit.before, edit.after, args.path)
        return ToolResult(
            output=f"Edited {args.path}: {edit.count} replacement{plural}.",
            display={"path": args.path, "diff": diff},
        )

    async def _plan_in_editor(self, path: Path, args: EditFileArgs) -> _Edit:
        assert self.files is not None
        _check_edit(args)
        before = await self.files.read_text(path)
        if before is None:
            raise _Refused(f"File not found: {args.path}")
        return _edit_text(
            before.removeprefix("\ufeff"), before.startswith("\ufeff"), args.path, args
        )

    async def _edit_in_editor(self, path: Path, args: EditFileArgs) -> _Edit:
        assert self.files is not None
        edit = await self._plan_in_editor(path, args)
        await self.files.write_text(path, ("\ufeff" if edit.bom else "") + edit.after)
        return edit
