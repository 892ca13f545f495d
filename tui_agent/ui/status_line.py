"""The status bar's own line: the person's status-line command, or the git branch.

With a status-line command set (`session/_status_line.py`), it runs with the session's state as
one JSON object on stdin, in the shape Claude Code gives its `statusLine` scripts (`model`,
`workspace`, `cost`, `context_window`, `session_id`, `cwd`, `version`) plus `git` and
`approval_mode`, and the first line it prints (ANSI colours kept) shows in the status bar. It
runs at most once a second, in the background: a state change while it runs asks for one more
run after it, never a queue; a run that takes longer than `TIMEOUT_S` is killed with its process
group and the line keeps its last text. A failing command blanks the line, as in Claude Code.

Without one, the status bar shows the workspace's git branch and a `*` when the tree has
changes, read with `git status` (bounded by the same timeout) when the app starts and after
each turn, each `!command` and each restore.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text

from tui_agent.lazy_dataclass import dataclass
from tui_agent.ui.state import Change, PaneChanged, Reset, Status
from tui_agent.ui.view_model import ViewModel
from tui_agent.ui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from tui_agent.session import StatusLineCommand

MIN_INTERVAL_S = 1.0
TIMEOUT_S = 5.0
MAX_OUTPUT = 64 * 1024  # a status line is one line; more than this is not read


@dataclass(frozen=True)
class GitState:
    branch: str  # the branch, or the short commit when detached
    dirty: bool

    @property
    def label(self) -> str:
        return f"⎇ {self.branch}{'*' if self.dirty else ''}"


async def git_state(workspace: Path) -> GitState | None:
    """The branch and whether the tree has changes; None outside a repository (or no git)."""
    done = await _run(
        ["git", "status", "--porcelain=2", "--branch", "--untracked-files=normal"],
        workspace,
        b"",
    )
    if done is None or done[0] != 0:
        return None
    head = oid = ""
    dirty = False
    for line in done[1].decode(errors="replace").splitlines():
        if line.startswith("# branch.head "):
            head = line.removeprefix("# branch.head ")
        elif line.startswith("# branch.oid "):
            oid = line.removeprefix("# branch.oid ")[:7]
        elif line and not line.startswith("#"):
            dirty = True
    branch = oid if head == "(detached)" else head
    return GitState(branch, dirty) if branch else None


def state_json(status: Status, workspace: str, git: GitState | None, started: float) -> str:
    """What the command gets on stdin: Claude Code's fields, then ours."""
    from tui_agent.version import package_version  # importlib.metadata: not for the first frame

    state: dict[str, Any] = {
        "hook_event_name": "Status",
        "session_id": status.session_id,
        "cwd": workspace,
        "version": package_version(),
        "model": {"id": status.model, "display_name": status.model},
        "workspace": {"current_dir": workspace, "project_dir": workspace},
        "cost": {
            "total_cost_usd": status.cost_usd or 0.0,
            "total_duration_ms": round((time.time() - started) * 1000),
        },
        "context_window": {
            "context_window_size": status.context_window,
            "used_percentage": status.context_percent,
            "total_input_tokens": status.tokens_in,
            "total_output_tokens": status.tokens_out,
        },
        "provider": status.provider,
        "approval_mode": status.approval_mode,
        "git": None if git is None else {"branch": git.branch, "dirty": git.dirty},
    }
    return json.dumps(state)


class StatusLineRunner:
    """Runs the command for the newest state, at most once per `MIN_INTERVAL_S`."""

    def __init__(
        self,
        command: str,
        cwd: Path,
        show: Callable[[Text], None],
        *,
        clock: Callable[[], float] = time.monotonic,
        min_interval_s: float = MIN_INTERVAL_S,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        self._command = command
        self._cwd = cwd
        self._show = show
        self._clock = clock
        self._state: str | None = None  # asked for, not yet given to a run
        self._task: asyncio.Task[None] | None = None
        self._interval = min_interval_s
        self._timeout = timeout_s
        self._last_start = -min_interval_s

    def request(self, state: str) -> None:
        """Show the line for `state` soon; the newest state wins."""
        self._state = state
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._drain())

    async def _drain(self) -> None:
        while self._state is not None:
            wait = self._last_start + self._interval - self._clock()
            if wait > 0:
                await asyncio.sleep(wait)
            state, self._state = self._state, None
            self._last_start = self._clock()
            argv = ["/bin/sh", "-c", self._command]
            done = await _run(argv, self._cwd, state.encode(), self._timeout)
            if done is None:
                continue  # timed out: the line keeps its last text
            code, out = done
            first = out.decode(errors="replace").splitlines()[:1]
            self._show(Text.from_ansi(first[0]) if code == 0 and first else Text())

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()


async def _run(
    argv: list[str], cwd: Path, stdin: bytes, timeout_s: float = TIMEOUT_S
) -> tuple[int, bytes] | None:
    """Exit status and stdout, or None when it took longer than `timeout_s` (then killed)."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,  # its own process group, killed whole
        )
    except OSError:
        return 127, b""
    try:
        out = await asyncio.wait_for(_talk(process, stdin), timeout_s)
    except TimeoutError:
        return None
    finally:
        if process.returncode is None:  # timed out, flooded, or the app is closing
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
    return process.returncode or 0, out


async def _talk(process: asyncio.subprocess.Process, stdin: bytes) -> bytes:
    assert process.stdin is not None and process.stdout is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(stdin)
        await process.stdin.drain()
        process.stdin.close()  # it did not read its input: its output still counts
    out = b""
    while len(out) < MAX_OUTPUT and (chunk := await process.stdout.read(MAX_OUTPUT - len(out))):
        out += chunk
    if len(out) < MAX_OUTPUT:
        await process.wait()
    return out


class OwnLine:
    """Keeps the status bar's own segment current for one workspace (see the module's text)."""

    def __init__(
        self,
        bar: StatusBar,
        vm: ViewModel,
        workspace: Path,
        command: StatusLineCommand | None,
    ) -> None:
        self._bar = bar
        self._vm = vm
        self._workspace = workspace
        self._started = time.time()
        self._git: GitState | None = None
        self._probing: asyncio.Task[None] | None = None
        self._runner: StatusLineRunner | None = None
        if command is not None:
            pad = " " * command.padding
            self._runner = StatusLineRunner(
                command.command, workspace, lambda text: self._set(Text(pad) + text)
            )
        self._was_idle = False
        self.stop = vm.listen(self._changed)
        self.refresh_git()

    def refresh_git(self) -> None:
        """Read the branch again (after a turn, a `!command`, a restore)."""
        if self._probing is None or self._probing.done():
            self._probing = asyncio.create_task(self._probe())

    def close(self) -> None:
        self.stop()
        if self._runner is not None:
            self._runner.close()
        if self._probing is not None:
            self._probing.cancel()

    async def _probe(self) -> None:
        self._git = await git_state(self._workspace)
        if self._runner is None:
            self._set(Text(self._git.label) if self._git is not None else Text())
        else:
            self._ask()

    def _changed(self, change: Change) -> None:
        if isinstance(change, Reset):
            self.refresh_git()
        elif isinstance(change, PaneChanged) and change.pane == "status":
            idle = self._vm.status.activity == "idle"
            if idle and not self._was_idle:
                self.refresh_git()
            self._was_idle = idle
            self._ask()

    def _ask(self) -> None:
        if self._runner is not None:
            status = self._vm.status
            self._runner.request(state_json(status, str(self._workspace), self._git, self._started))

    def _set(self, text: Text) -> None:
        if self._bar.own_line != text:
            self._bar.own_line = text
            self._bar.refresh_status()
