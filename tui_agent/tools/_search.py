"""The search tools: `glob` (files by name pattern) and `grep` (lines by regular expression).

Both walk the workspace as git sees it (`.gitignore` files respected, `.git/` skipped), sort
their results and bound their output, saying how much was left out. The walk runs in a worker
thread and stops early when the call is aborted.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from tui_agent.tools._accesses import ToolAccesses
from tui_agent.tools._base import Tool, ToolArgs, ToolContext
from tui_agent.tools._walk import glob_regex, walk_files
from tui_agent.tools._workspace import Workspace, WorkspaceError
from tui_agent.vocab import AbortSignal, ToolResult, error_result

MAX_GLOB_RESULTS = 500
MAX_GREP_MATCHES = 250
MAX_GREP_LINE = 400
MAX_GREP_FILE_BYTES = 20_000_000
_SNIFF = 8_192


def _search_root(workspace: Workspace, path: str | None) -> Path:
    top = workspace.resolve(path or ".")
    if not workspace.contains(top) and top.is_dir():
        # a readable extra root (the spill folder): its files can be read and grepped one by
        # one, but the tree walks stay in the workspace
        raise WorkspaceError(f"Only the workspace can be searched, not {path}.")
    return top


def _search_accesses(workspace: Workspace, path: str | None) -> ToolAccesses:
    try:
        return ToolAccesses.search_tree(str(_search_root(workspace, path)))
    except WorkspaceError:
        return ToolAccesses.none()


def _files_under(workspace: Workspace, top: Path, signal: AbortSignal) -> list[tuple[str, str]]:
    """(absolute, shown) for `top` itself when it is a file, else for the files below it."""
    root = str(workspace.root)
    if top.is_file():
        return [(str(top), workspace.display(top))]
    if not top.is_dir():
        raise WorkspaceError(f"Path not found: {workspace.display(top)}")
    return list(walk_files(str(top), root, lambda: signal.aborted))


# --- glob --------------------------------------------------------------------------------------


class GlobArgs(ToolArgs):
    pattern: str = Field(
        description='Glob pattern, e.g. "**/*.py" (** = any folders), "src/*.{ts,tsx}".'
    )
    path: str | None = Field(
        default=None, description="Folder to search in, relative to the workspace. Default: all."
    )


def _glob(workspace: Workspace, args: GlobArgs, signal: AbortSignal) -> str:
    top = _search_root(workspace, args.path)
    if not top.is_dir():
        raise WorkspaceError(f"{args.path} is not a folder.")
    pattern = args.pattern.removeprefix(str(top) + "/")  # an absolute pattern inside `top`
    matcher = re.compile(glob_regex(pattern.lstrip("/").removeprefix("./")))
    prefix = "" if workspace.display(top) == "." else workspace.display(top) + "/"
    found = [  # walk order is already sorted, folder by folder
        rel
        for _absolute, rel in walk_files(str(top), str(workspace.root), lambda: signal.aborted)
        if matcher.fullmatch(rel[len(prefix) :])
    ]
    where = args.path or "the workspace"
    if not found:
        hint = "" if "/" in args.pattern else ' (use "**/" to look in subfolders too)'
        return f'No files match "{args.pattern}" in {where}{hint}.'
    shown = found[:MAX_GLOB_RESULTS]
    lines = list(shown)
    if len(found) > len(shown):
        lines.append(
            f"[{len(found) - len(shown)} more files not shown; narrow the pattern or the path.]"
        )
    return "\n".join(lines)


class Glob(Tool[GlobArgs]):
    name = "glob"
    description = (
        "Find files by name pattern. Paths come sorted, relative to the workspace, skipping what "
        f".gitignore excludes and .git/. At most {MAX_GLOB_RESULTS} are listed."
    )
    Args = GlobArgs
    read_only: ClassVar[bool] = True

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def accesses(self, args: GlobArgs) -> ToolAccesses:
        return _search_accesses(self.workspace, args.path)

    def describe(self, args: GlobArgs) -> str:
        return args.pattern if args.path is None else f"{args.pattern} in {args.path}"

    async def execute(self, args: GlobArgs, ctx: ToolContext) -> ToolResult:
        try:
            text = await asyncio.to_thread(_glob, self.workspace, args, ctx.signal)
        except (WorkspaceError, re.error) as error:
            return error_result(str(error))
        return ToolResult(output=text)


# --- grep --------------------------------------------------------------------------------------


class GrepArgs(ToolArgs):
    pattern: str = Field(description="Python regular expression, matched against each line.")
    path: str | None = Field(
        default=None, description="File or folder to search, relative to the workspace."
    )
    glob: str | None = Field(
        default=None,
        description='Only files matching this glob, e.g. "*.py" (any folder) or "src/**/*.ts".',
    )
    ignore_case: bool = Field(default=False, description="Match regardless of case.")


@dataclass
class _Found:
    lines: list[str]
    total: int = 0
    files: int = 0
    skipped_large: int = 0


def _file_filter(pattern: str | None) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    if "/" in pattern:
        return re.compile(glob_regex(pattern.lstrip("/").removeprefix("./")))
    return re.compile("(?:.*/)?" + glob_regex(pattern))  # no slash: the name, in any folder


def _grep(workspace: Workspace, args: GrepArgs, signal: AbortSignal) -> _Found:
    flags = re.IGNORECASE if args.ignore_case else 0
    line_rx = re.compile(args.pattern, flags)
    # Whole-file prefilter: skips most files without splitting them into lines. \A and \Z
    # mean something else on a whole file, so such patterns go line by line only.
    whole_rx = (
        None
        if re.search(r"\\[AZz]", args.pattern)
        else re.compile(args.pattern, flags | re.MULTILINE)
    )
    wanted = _file_filter(args.glob)
    top = _search_root(workspace, args.path)
    top_shown = workspace.display(top)
    strip = 0 if top_shown == "." or top.is_file() else len(top_shown) + 1
    found = _Found(lines=[])
    for absolute, rel in _files_under(workspace, top, signal):
        if signal.aborted:
            break
        if wanted is not None and not wanted.fullmatch(rel[strip:] or os.path.basename(rel)):
            continue
        try:
            with open(absolute, "rb", buffering=0) as handle:
                if os.fstat(handle.fileno()).st_size > MAX_GREP_FILE_BYTES:
                    found.skipped_large += 1
                    continue
                data = handle.readall()
        except OSError:
            continue
        if b"\x00" in data[:_SNIFF]:
            continue
        text = data.decode("utf-8", errors="replace")
        if whole_rx is not None and whole_rx.search(text) is None:
            continue
        hits = 0
        for number, line in enumerate(text.splitlines(), 1):
            if line_rx.search(line) is None:
                continue
            hits += 1
            found.total += 1
            if len(found.lines) < MAX_GREP_MATCHES:
                if len(line) > MAX_GREP_LINE:
                    line = line[:MAX_GREP_LINE] + "..."
                found.lines.append(f"{rel}:{number}:{line}")
        found.files += hits > 0
    return found


def _grep_report(found: _Found, args: GrepArgs) -> str:
    if not found.lines:
        text = f'No matches for "{args.pattern}"'
        text += f" in {args.path}." if args.path else "."
    else:
        text = "\n".join(found.lines)
        if found.total > len(found.lines):
            text += (
                f"\n[{found.total - len(found.lines)} more matches not shown ({found.total} in "
                f"{found.files} files); narrow the pattern, the path or the glob.]"
            )
    if found.skipped_large:
        text += f"\n[{found.skipped_large} files over {MAX_GREP_FILE_BYTES} bytes were skipped.]"
    return text


class Grep(Tool[GrepArgs]):
    name = "grep"
    description = (
        "Search file contents with a Python regular expression, line by line. Prints sorted "
        "`path:line:text` matches, skipping binary files, what .gitignore excludes and .git/. "
        f"At most {MAX_GREP_MATCHES} matches are listed."
    )
    Args = GrepArgs
    read_only: ClassVar[bool] = True

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def accesses(self, args: GrepArgs) -> ToolAccesses:
        return _search_accesses(self.workspace, args.path)

    def describe(self, args: GrepArgs) -> str:
        return args.pattern if args.path is None else f"{args.pattern} in {args.path}"

    async def execute(self, args: GrepArgs, ctx: ToolContext) -> ToolResult:
        try:
            re.compile(args.pattern)
        except re.error as error:
            return error_result(f"Invalid regular expression {args.pattern!r}: {error}")
        try:
            found = await asyncio.to_thread(_grep, self.workspace, args, ctx.signal)
        except (WorkspaceError, re.error) as error:
            return error_result(str(error))
        return ToolResult(output=_grep_report(found, args))
