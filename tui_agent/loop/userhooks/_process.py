"""Running one hook command: JSON on stdin, bounded output, a timeout, its process group killed.

The command runs under `bash -c` in the workspace, in a process group of its own (the tools'
`spawn_group`, so the reaper ends it even if tui-agent is killed). At most `CAPTURE_LIMIT`
bytes of stdout and of stderr are kept; the rest is read and dropped, so a hook that floods its
output neither fills memory nor blocks on a full pipe. On timeout, and when the run is
cancelled (the turn was), the whole group is terminated. Everything is asyncio: nothing here
blocks the event loop the screen is drawn from.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from pathlib import Path

from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop.userhooks._spec import HookSpec
from tui_agent.tools import end_group, spawn_group, terminate_group

CAPTURE_LIMIT = 64 * 1024
_CHUNK = 16 * 1024


@dataclass(frozen=True)
class HookRun:
    """How one run went. `exit_code` None: it did not finish (timed out, or could not start)."""

    spec: HookSpec
    exit_code: int | None
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    error: str | None = None  # it could not be started
    truncated: bool = False  # more output than `CAPTURE_LIMIT` came and was dropped

    @property
    def summary(self) -> str:
        """One line for /hooks and the transcript."""
        if self.error is not None:
            return f"could not start: {self.error}"
        if self.timed_out:
            return f"timed out after {self.spec.timeout_s:g} s (killed)"
        return f"exit {self.exit_code} in {self.duration_s:.1f} s"


async def run_command(spec: HookSpec, payload: bytes, cwd: Path, env: Mapping[str, str]) -> HookRun:
    started = time.monotonic()
    try:
        process = await spawn_group(
            ["bash", "-c", spec.command],
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(cwd),
            env=dict(env),
        )
    except OSError as exc:
        return HookRun(spec, None, "", "", time.monotonic() - started, error=str(exc))
    assert process.stdin and process.stdout and process.stderr
    out, err = _Capture(), _Capture()
    readers = asyncio.gather(
        _feed(process.stdin, payload), out.drain(process.stdout), err.drain(process.stderr)
    )
    timed_out = False
    try:
        async with asyncio.timeout(spec.timeout_s):
            await readers
            code = await process.wait()
    except TimeoutError:
        timed_out = True
        code = None
    finally:
        if process.returncode is None:
            await terminate_group(process.pid)  # a timeout, or the turn was cancelled
            readers.cancel()
            with contextlib.suppress(BaseException):
                await readers
        else:
            end_group(process.pid)  # what it left running in the background
    return HookRun(
        spec,
        code,
        out.text(),
        err.text(),
        time.monotonic() - started,
        timed_out=timed_out,
        truncated=out.dropped or err.dropped,
    )


async def _feed(stdin: asyncio.StreamWriter, payload: bytes) -> None:
    # A hook that never reads its input must not fail the run: a closed pipe is fine.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(payload)
        await stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.close()


class _Capture:
    def __init__(self) -> None:
        self._kept = bytearray()
        self.dropped = False

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            room = CAPTURE_LIMIT - len(self._kept)
            if room > 0:
                self._kept += chunk[:room]
            if len(chunk) > room:
                self.dropped = True

    def text(self) -> str:
        return self._kept.decode("utf-8", errors="replace")
