"""The search tools: `glob` (files by name pattern) and `grep` (lines by regular expression).

Both see the workspace as git does (`.gitignore` files respected, `.git/` skipped, special
files left out), sort their results and bound their output, saying how much was left out, and
show file names that are not UTF-8 escaped (`caf\\xe9.txt`). `glob` lists the tree with
`rg --files`, or walks it in a worker thread where there is no `rg`, and stops early when the
call is aborted. `grep` runs ripgrep (the `ripgrep` package ships it), or our Python search
where there is no `rg`, always as a child process that is killed when the call is aborted or
after `GREP_TIMEOUT_S`: a pattern that backtracks for ever cannot freeze the app. ripgrep does
not search symlinked files; the Python search follows a link to a file inside the workspace.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import heapq
import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from tui_agent.lazy_dataclass import dataclass
from tui_agent.tools._accesses import ToolAccesses
from tui_agent.tools._base import Tool, ToolAborted, ToolArgs, ToolContext
from tui_agent.tools._pygrep import (
    MAX_GREP_FILE_BYTES,
    MAX_GREP_MATCHES,
    WORKER,
    Found,
    Query,
    shown_path,
)
from tui_agent.tools._rg import (
    RG_TREE,
    SearchFailed,
    SearchStopped,
    rg_batches,
    rg_files,
    rg_path,
    worker_batches,
)
from tui_agent.tools._walk import glob_regex, walk_files, walk_order
from tui_agent.tools._workspace import Workspace, WorkspaceError
from tui_agent.vocab import AbortSignal, ToolFacts, ToolResult, error_result

MAX_GLOB_RESULTS = 500
GREP_TIMEOUT_S = 30.0


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


# --- glob --------------------------------------------------------------------------------------


class GlobArgs(ToolArgs):
    pattern: str = Field(
        description='Glob pattern, e.g. "**/*.py" (** = any folders), "src/*.{ts,tsx}".'
    )
    path: str | None = Field(
        default=None, description="Folder to search in, relative to the workspace. Default: all."
    )


@dataclass(frozen=True)
class _GlobQuery:
    top: Path  # the folder searched
    root: Path  # the workspace root
    prefix: str  # `top` shown relative to the workspace, with a trailing "/" ("" at the root)
    matcher: re.Pattern[str]  # matched against paths below `top`


def _glob_query(workspace: Workspace, args: GlobArgs) -> _GlobQuery:
    top = _search_root(workspace, args.path)
    if not top.is_dir():
        raise WorkspaceError(f"{args.path} is not a folder.")
    pattern = args.pattern.removeprefix(str(top) + "/")  # an absolute pattern inside `top`
    matcher = re.compile(glob_regex(pattern.lstrip("/").removeprefix("./")))
    prefix = "" if workspace.display(top) == "." else workspace.display(top) + "/"
    return _GlobQuery(top, workspace.root, prefix, matcher)


def _glob_walk(query: _GlobQuery, signal: AbortSignal) -> tuple[list[str], int]:
    """The first MAX_GLOB_RESULTS matching files as our own walker lists them (in walk order),
    and how many match in all."""
    walk = walk_files(str(query.top), str(query.root), lambda: signal.aborted)
    found = [rel for _absolute, rel in walk if query.matcher.fullmatch(rel[len(query.prefix) :])]
    return found[:MAX_GLOB_RESULTS], len(found)


async def _glob_rg(query: _GlobQuery, signal: AbortSignal) -> tuple[list[str], int]:
    """The same from ripgrep's listing of the tree (`rg --files`, in no particular order): only
    the first MAX_GLOB_RESULTS are put in order, by their `walk_order` keys."""
    below = await rg_files(str(query.top), signal=signal, timeout_s=GREP_TIMEOUT_S)
    matched = list(filter(query.matcher.fullmatch, below))
    first = heapq.nsmallest(MAX_GLOB_RESULTS, map(walk_order, matched))
    return [query.prefix + key.replace("\0", "/") for key in first], len(matched)


def _glob_report(first: list[str], total: int, args: GlobArgs) -> str:
    where = args.path or "the workspace"
    if not total:
        hint = "" if "/" in args.pattern else ' (use "**/" to look in subfolders too)'
        return f'No files match "{args.pattern}" in {where}{hint}.'
    lines = [shown_path(rel) for rel in first]
    if total > len(lines):
        more = total - len(lines)
        lines.append(f"[{more} more files not shown; narrow the pattern or the path.]")
    return "\n".join(lines)


class Glob(Tool[GlobArgs]):
    name = "glob"
    facts = ToolFacts(
        kind="search",
        verb="Find",
        primary_arg="pattern",
        advice="glob: find files by name pattern instead of guessing paths.",
    )
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
            query = await asyncio.to_thread(_glob_query, self.workspace, args)
            if rg_path() is not None:
                first, total = await _glob_rg(query, ctx.signal)
            else:
                first, total = await asyncio.to_thread(_glob_walk, query, ctx.signal)
        except (WorkspaceError, re.error) as error:
            return error_result(str(error))
        except (SearchStopped, SearchFailed) as error:
            return error_result(f"Listing the files failed: {error}")
        return ToolResult(output=_glob_report(first, total, args))


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


def _query(workspace: Workspace, args: GrepArgs) -> Query:
    top = _search_root(workspace, args.path)
    if not top.exists():
        raise WorkspaceError(f"Path not found: {workspace.display(top)}")
    return Query(
        root=str(workspace.root),
        top=str(top),
        top_shown=workspace.display(top),
        pattern=args.pattern,
        ignore_case=args.ignore_case,
        glob=args.glob,
        top_is_file=top.is_file(),
    )


_RG_OPTIONS = (
    # the tree as our own walk sees it: hidden files searched, .gitignore, .ignore and
    # .git/info/exclude obeyed (also outside a git repository) from the workspace down, never
    # a parent folder's or the user's global rules, never .git/ itself; CRLF lines match like LF.
    # No `--sort`: it would make ripgrep walk with one thread; `_FirstFiles` sorts instead.
    "--json", *RG_TREE, "--crlf",
)  # fmt: skip


async def _grep_rg(query: Query, signal: AbortSignal) -> Found:
    """The search through ripgrep's JSON output; only the kept matches are fully parsed.

    ripgrep searches files in parallel and prints each file's matches together (a "begin"
    line, its "match" lines, an "end"), files in any order."""
    args = [*_RG_OPTIONS, "--ignore-case" if query.ignore_case else "--case-sensitive"]
    args += ["--regexp", query.pattern]
    if query.top != query.root:
        args += ["--", query.top]  # absolute: rg then prints absolute paths too
    wanted = query.wanted()
    first = _FirstFiles()
    files = total = 0
    reporting = False  # whether the file being read passes the glob argument
    batches = rg_batches(args, cwd=query.root, signal=signal, timeout_s=GREP_TIMEOUT_S)
    async for batch in batches:
        for line in batch:
            if line.startswith(b'{"type":"begin"'):
                path = _rg_text(json.loads(line)["data"]["path"])
                rel = query.top_shown if query.top_is_file else _below(path, query.root)
                reporting = wanted(rel)
                if reporting:
                    first.begin(rel)
                    files += 1
            elif reporting and line.startswith(b'{"type":"match"'):
                total += 1
                first.match(line)
    found = Found(files=files)
    for rel, kept in first.in_order():
        for line in kept:
            data = json.loads(line)["data"]
            text = _rg_text(data["lines"], "replace").removesuffix("\n").removesuffix("\r")
            found.add(rel, data["line_number"], text)
    found.total = total  # `add` counted only the kept ones
    return found


class _FirstFiles:
    """The files whose matches may still be among the first MAX_GREP_MATCHES in walk order,
    each with its first MAX_GREP_MATCHES match lines (unparsed JSON): the rest are dropped
    from time to time, so a search that matches everywhere holds little."""

    def __init__(self) -> None:
        self.files: list[tuple[str, str, list[bytes]]] = []  # (walk_order key, path, matches)
        self.lines = 0  # match lines held

    def begin(self, rel: str) -> None:
        """The lines `match` is given from now on are this file's."""
        if self.lines > 4 * MAX_GREP_MATCHES:
            self._prune()
        self.files.append((walk_order(rel), rel, []))

    def match(self, line: bytes) -> None:
        matches = self.files[-1][2]
        if len(matches) < MAX_GREP_MATCHES:
            matches.append(line)
            self.lines += 1

    def in_order(self) -> list[tuple[str, list[bytes]]]:
        self._prune()
        return [(rel, matches) for _key, rel, matches in self.files]

    def _prune(self) -> None:
        """Keep the first files (in walk order) that hold MAX_GREP_MATCHES lines together."""
        self.files.sort(key=lambda file: file[0])
        self.lines = 0
        for index, (_key, _rel, matches) in enumerate(self.files):
            self.lines += len(matches)
            if self.lines >= MAX_GREP_MATCHES:
                del self.files[index + 1 :]
                return


def _below(path: str, root: str) -> str:
    """rg's path of a file (absolute when a folder was named, else relative) as the walk's."""
    return path[len(root) + 1 :] if path.startswith(root + "/") else path


def _rg_text(value: dict[str, str], errors: str = "backslashreplace") -> str:
    """ripgrep's {"text": ...} or, for bytes that are not UTF-8, {"bytes": base64}: names get
    their bad bytes escaped (as `shown_path` does), lines get them replaced (as reading does)."""
    if "text" in value:
        return value["text"]
    return base64.b64decode(value["bytes"]).decode("utf-8", errors)


async def _grep_python(query: Query, signal: AbortSignal) -> Found:
    """The search in our own Python code, in a worker process that can be killed."""
    request = json.dumps(asdict(query)).encode()
    lines = [
        line
        async for batch in worker_batches(
            [*WORKER, f"{GREP_TIMEOUT_S + 5:g}"],
            cwd=query.root,
            signal=signal,
            timeout_s=GREP_TIMEOUT_S,
            stdin=request,
        )
        for line in batch
    ]
    return Found(**json.loads(b"\n".join(lines)))


def _grep_report(found: Found, args: GrepArgs) -> str:
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
    facts = ToolFacts(
        kind="search",
        verb="Search",
        primary_arg="pattern",
        advice="grep: search file contents by regular expression to find definitions and uses.",
    )
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
            query = await asyncio.to_thread(_query, self.workspace, args)
            found = None
            if rg_path() is not None:
                with contextlib.suppress(SearchFailed):  # e.g. a look-ahead rg cannot parse
                    found = await _grep_rg(query, ctx.signal)
            if found is None:
                found = await _grep_python(query, ctx.signal)
        except WorkspaceError as error:
            return error_result(str(error))
        except SearchFailed as error:
            return error_result(f"grep failed: {error}")
        except SearchStopped as stopped:
            if not stopped.timed_out:
                raise ToolAborted("") from None
            return error_result(
                f"grep stopped after {GREP_TIMEOUT_S:g} s without finishing. The pattern may "
                "backtrack badly (nested repeats like (a+)+) or the tree is very large: "
                "simplify the pattern or narrow the path or the glob."
            )
        return ToolResult(output=_grep_report(found, args))
