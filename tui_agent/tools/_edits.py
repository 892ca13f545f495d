"""The file tools that change files: `write_file` and `edit_file`.

Writing creates parent folders; editing replaces one exact, unique match (or every match with
`replace_all`). Both read and write through `_files` (`save_file`: atomic, permissions kept, no
link followed that was swapped in after the check) and report a unified diff in `display` for
the UI, the same diff they show when asking for approval. All disk work, and the diffs, run in
a worker thread.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from tui_agent.lazy_dataclass import dataclass
from tui_agent.tools._accesses import ToolAccesses
from tui_agent.tools._base import Tool, ToolArgs, ToolContext
from tui_agent.tools._diff import unified_diff
from tui_agent.tools._files import (
    EditorFiles,
    _decode,
    _read_bytes,
    _read_text,
    _Refused,
    save_file,
)
from tui_agent.tools._rules import path_rule_matches
from tui_agent.tools._workspace import Workspace, WorkspaceError
from tui_agent.vocab import FileChange, ToolFacts, ToolResult, error_result

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
            change = await self._change(args)
        except (WorkspaceError, _Refused, OSError) as error:
            return f"{args.path}: {error}"
        return await asyncio.to_thread(unified_diff, change.before or "", change.after, args.path)

    async def proposed_change(self, args: WriteFileArgs) -> FileChange | None:
        try:
            return await self._change(args)
        except (WorkspaceError, _Refused, OSError):
            return None  # the preview says why; the call fails with it when it runs

    async def _change(self, args: WriteFileArgs) -> FileChange:
        path = self.workspace.resolve(args.path, write=True)
        if self.files is not None:  # the text the write would replace is the editor's
            before = await self.files.read_text(path)
        else:
            before = await asyncio.to_thread(_existing_text, self.workspace, path, args.path)
        return FileChange(path=str(path), before=before, after=args.content)

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

    async def proposed_change(self, args: EditFileArgs) -> FileChange | None:
        try:
            edit = await self._plan(args)
            path = self.workspace.resolve(args.path, write=True)
        except (WorkspaceError, _Refused, OSError):
            return None  # `check` has refused the call before anyone is asked
        return FileChange(path=str(path), before=edit.before, after=edit.after)

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
