"""Running search workers (ripgrep, or our own Python search) as bounded, killable processes.

A regular expression that backtracks forever holds the interpreter's lock; run in this process
it would freeze the app. So searches run in a child process: `worker_batches` starts one,
yields its output as batches of lines, and kills it when the call is aborted or its time is up
(then it raises `SearchStopped`); the reaper (`_groups`) knows it while it runs, so it dies with
the agent even after kill -9. `rg_path` finds the `rg` binary that the `ripgrep` package
installs beside our interpreter (or one on PATH); `rg_batches` runs it with the caller's
arguments (the `grep` tool uses `--json`), and `rg_files` lists a tree the way our own walker
sees it (for `glob` and the @ file index).

A listing of 100,000 files is 100,000 lines, so the output is read in large chunks and handed
on a batch at a time: one await, or one async-generator step, per line would cost more than
ripgrep's whole walk.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import sys
import sysconfig
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

from tui_agent.tools._groups import track, untrack
from tui_agent.vocab import AbortSignal

# The tree as `walk_files` sees it (see tools/_walk.py), for every rg that walks the workspace.
RG_TREE = (
    "--hidden", "--no-require-git", "--no-ignore-parent", "--no-ignore-global",
    "--glob", "!.git",
)  # fmt: skip
_LINE_LIMIT = 1 << 24  # one output line may be long (a minified file's match)
_CHUNK = 1 << 18


class SearchStopped(Exception):
    """The worker was killed: `timed_out` says whether by its time limit (else an abort)."""

    def __init__(self, timed_out: bool) -> None:
        super().__init__("timed out" if timed_out else "aborted")
        self.timed_out = timed_out


class SearchFailed(Exception):
    """The worker ended with an error and printed nothing; the message is its stderr."""


@functools.cache
def rg_path() -> str | None:
    """The `rg` binary: the one the `ripgrep` package put beside this interpreter, else PATH."""
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = Path(folder) / "rg"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")


def rg_batches(
    args: Sequence[str], *, cwd: str, signal: AbortSignal, timeout_s: float
) -> AsyncGenerator[list[bytes]]:
    """Run `rg` (which must exist: see `rg_path`) with `args`, ignoring any user config."""
    binary = rg_path()
    assert binary is not None, "rg_batches needs rg_path()"
    return worker_batches(
        [binary, "--no-config", *args], cwd=cwd, signal=signal, timeout_s=timeout_s
    )


async def rg_files(
    cwd: str, *, signal: AbortSignal, timeout_s: float, limit: int | None = None
) -> list[str]:
    """The files below `cwd` (relative to it, `/`-separated, in no particular order) that our
    own walker would list, through `rg --files`; at most `limit` of them (the rest unread)."""
    files: list[str] = []
    args = ["--files", *RG_TREE, "--no-messages"]
    batches = rg_batches(args, cwd=cwd, signal=signal, timeout_s=timeout_s)
    async with contextlib.aclosing(batches):  # leaving early ends rg at once
        async for batch in batches:
            files += os.fsdecode(b"\n".join(batch)).split("\n")  # one decode per batch
            if limit is not None and len(files) >= limit:
                return files[:limit]
    return files


async def worker_batches(
    argv: Sequence[str],
    *,
    cwd: str,
    signal: AbortSignal,
    timeout_s: float,
    stdin: bytes | None = None,
) -> AsyncGenerator[list[bytes]]:
    """The output of the process `argv` as batches of lines (without their newlines), killed
    on abort or timeout; a caller that stops iterating (and closes the generator) kills it too.

    Exit status 0 or 1 is success (grep's "found" and "nothing found"); any other status with
    no output raises `SearchFailed`, and a kill raises `SearchStopped` after the lines read.
    Without `stdin` the worker's input is /dev/null (rg would search a piped stdin)."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=_LINE_LIMIT,
        start_new_session=True,  # a Ctrl+C at the terminal is the agent's to handle, not theirs
    )
    # Should the agent die (kill -9 included), the reaper ends the worker: a search that
    # backtracks would otherwise spin until its CPU budget runs out.
    track(process.pid)
    assert process.stdout is not None and process.stderr is not None
    stopped: list[bool] = []

    async def watch() -> None:
        aborted = asyncio.ensure_future(signal.wait())
        try:
            done, _ = await asyncio.wait({aborted}, timeout=timeout_s)
        finally:
            aborted.cancel()
        stopped.append(not done)
        with contextlib.suppress(ProcessLookupError):
            process.kill()

    watchdog = asyncio.ensure_future(watch())
    errors = asyncio.ensure_future(process.stderr.read())
    printed = False
    try:
        if process.stdin is not None and stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                process.stdin.write(stdin)
                await process.stdin.drain()
                process.stdin.close()
        pending = b""
        while chunk := await process.stdout.read(_CHUNK):
            printed = True
            *lines, pending = (pending + chunk).split(b"\n")
            if lines:
                yield lines
            if len(pending) > _LINE_LIMIT:  # one line over the limit: stop rather than hold it
                raise SearchFailed(f"an output line over {_LINE_LIMIT} bytes")
        if pending:
            yield [pending]
        code = await process.wait()
    finally:
        watchdog.cancel()
        try:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        finally:
            untrack(process.pid)
        message = (await errors).decode("utf-8", "replace").strip()
    if stopped:
        raise SearchStopped(timed_out=stopped[0])
    if code not in (0, 1) and not printed:
        raise SearchFailed(message or f"exit status {code}")
