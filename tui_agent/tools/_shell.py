"""The `shell` tool: `bash -c` in its own process group, streamed, bounded, and never orphaned.

The command runs in the workspace root, in a new session (so its process group is its own),
with stdin closed and every key variable removed from its environment (`tui_agent.keys`),
inside the OS sandbox the tool was built with (`_sandbox`) unless the call says `sandbox:
false` (which approvals always ask about); a sandboxed failure that reads like a denial
tells the model so.
Output of both streams goes to `on_update` as it arrives; each stream keeps its first and last
`CAPTURE_CHARS` in memory and, past that, streams to a part file in the session's spill folder,
so a flood of output is kept whole: the result is then a pointer to one spill file holding all
of it. When the command ends, times out or is cancelled, or the executor closes, the whole
group gets SIGTERM and, after a short grace, SIGKILL; so does anything the command left running
in the background. `background: true` detaches at once with the process id and reports the
final result when the command ends. Should the agent itself end without that (a second Ctrl+C,
a crash, kill -9), `_groups` and its reaper still kill the group.

Approval rules match a command by its leading words (`git status` allows `git status -s`, not
`git statusx`); a command that chains, pipes, redirects or substitutes never matches a rule.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import shutil
import signal as signals
from collections import deque
from pathlib import Path
from typing import Any, ClassVar, TextIO

import aiofiles
import aiofiles.os
from pydantic import Field

from tui_agent import keys
from tui_agent.tools._accesses import ToolAccesses
from tui_agent.tools._base import Tool, ToolAborted, ToolArgs, ToolContext
from tui_agent.tools._groups import spawn_group, terminate_group
from tui_agent.tools._results import spill_path, spilled
from tui_agent.tools._rules import command_parts, shell_rule_matches
from tui_agent.tools._sandbox import UNSANDBOXED, Sandbox, looks_denied, retry_hint
from tui_agent.tools._terminal import EditorTerminal
from tui_agent.tools._workspace import Workspace
from tui_agent.vocab import ToolFacts, ToolResult, ToolUpdate

DEFAULT_TIMEOUT_S = 120.0
DRAIN_TIMEOUT_S = 1.0
CAPTURE_CHARS = 1_000_000  # kept from each end of each stream
_COMPOUND = re.compile(r"[;&|`<>\n\r]|\$\(")
_WITH_SUBCOMMANDS = frozenset(
    {"git", "npm", "pnpm", "yarn", "bun", "deno", "cargo", "go", "pip", "uv", "poetry", "hatch"}
    | {"docker", "kubectl", "gh", "make", "dotnet", "brew", "apt", "apt-get", "conda"}
)
_SUBCOMMAND = re.compile(r"[A-Za-z][\w:.-]*")


def command_prefix(command: str) -> str:
    """What "approve always" remembers: the program, plus its subcommand for git, npm, ..."""
    words = command.split()
    if not words or _COMPOUND.search(command):
        return " ".join(words)
    if len(words) > 1 and words[0] in _WITH_SUBCOMMANDS and _SUBCOMMAND.fullmatch(words[1]):
        return " ".join(words[:2])
    return words[0]


def _leader_exit(process: asyncio.subprocess.Process) -> asyncio.Future[None]:
    """Resolves when the command's own process exits, even while its children hold the pipes
    (asyncio's `wait()` also waits for the pipes). Uses a pidfd, or polls where there is none."""
    loop = asyncio.get_running_loop()
    exited: asyncio.Future[None] = loop.create_future()
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):

        async def poll() -> None:
            while process.returncode is None:  # noqa: ASYNC110 - no exit event without a pidfd
                await asyncio.sleep(0.05)

        return asyncio.ensure_future(poll())

    def ready() -> None:
        if not exited.done():
            exited.set_result(None)

    def close(_: asyncio.Future[None]) -> None:
        loop.remove_reader(pidfd)
        os.close(pidfd)

    loop.add_reader(pidfd, ready)
    exited.add_done_callback(close)
    return exited


class _Capture:
    """One stream's text: the head and the tail are kept in memory, the middle of a flood is
    dropped from memory. With a `part` file, everything after the head also goes there as it
    arrives, so the whole stream can be put together in a spill file when the command ends."""

    def __init__(self, part: Path | None) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head: list[str] = []
        self._head_size = 0
        self._tail: deque[str] = deque()
        self._tail_size = 0
        self._part_path = part
        self._part: Any = None  # the open part file, once the head is full
        self.dropped = 0
        self.size = 0
        self.newlines = 0  # of the whole stream, kept or not: the spill file's line count

    async def add(self, data: bytes, final: bool = False) -> str:
        text = self._decoder.decode(data, final)
        self.size += len(text)
        self.newlines += text.count("\n")
        if self._head_size < CAPTURE_CHARS:
            self._head.append(text)
            self._head_size += len(text)
            return text
        if self._part is None and self._part_path is not None:
            await aiofiles.os.makedirs(self._part_path.parent, exist_ok=True)
            self._part = await aiofiles.open(self._part_path, "w", encoding="utf-8")
        if self._part is not None:
            await self._part.write(text)
        self._tail.append(text)
        self._tail_size += len(text)
        while self._tail_size - len(self._tail[0]) >= CAPTURE_CHARS:
            removed = self._tail.popleft()
            self._tail_size -= len(removed)
            self.dropped += len(removed)
        return text

    @property
    def streamed(self) -> bool:
        """Whether the stream went beyond its head into the part file."""
        return self._part is not None

    async def close(self) -> None:
        if self._part is not None:
            await self._part.close()

    def copy_to(self, target: TextIO) -> None:
        """Write the whole stream to `target` (blocking: run it in a worker thread)."""
        target.write("".join(self._head))
        if self._part_path is not None and self._part is not None:
            with open(self._part_path, encoding="utf-8") as part:
                shutil.copyfileobj(part, target)
        else:
            target.write("".join(self._tail))

    def discard(self) -> None:
        if self._part_path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._part_path)

    def text(self) -> str:
        middle = f"\n[... {self.dropped} characters not kept ...]\n" if self.dropped else ""
        return "".join(self._head) + middle + "".join(self._tail)


def _save_whole(target: Path, out: _Capture, err: _Capture, status: str) -> tuple[int, int]:
    """Put the whole output together in `target`, laid out as `_report` lays out what it keeps;
    returns its length in characters and in lines."""
    with open(target, "w", encoding="utf-8") as file:
        out.copy_to(file)
        size, newlines = out.size, out.newlines
        if err.size:
            file.write("\nstderr:\n")
            err.copy_to(file)
            size += len("\nstderr:\n") + err.size
            newlines += 2 + err.newlines
        file.write("\n" + status)
        file.flush()
        os.fsync(file.fileno())
    return size + 1 + len(status), newlines + 2 + status.count("\n")


class ShellArgs(ToolArgs):
    command: str = Field(description="The bash command line to run in the workspace root.")
    timeout_s: float | None = Field(
        default=None,
        gt=0,
        description=f"Kill the command after this many seconds. Default {DEFAULT_TIMEOUT_S:g} "
        "(background commands: no limit unless given).",
    )
    background: bool = Field(
        default=False,
        description="Run detached (servers, watchers, long builds): you get the pid now and "
        "are notified with the output when it ends.",
    )
    sandbox: bool = Field(
        default=True,
        description="Run inside the OS sandbox (writes only in the workspace and /tmp, "
        "usually no network, secrets hidden). Set false only to retry a command that failed "
        "because of the sandbox, and say why first: running outside it always asks the person.",
    )


def _environment() -> dict[str, str]:
    env = keys.tool_environment()
    env.update(PAGER="cat", GIT_PAGER="cat", GIT_TERMINAL_PROMPT="0")
    return env


def _partial(out: str, err: str) -> str:
    return out.rstrip("\n") + (f"\nstderr:\n{err.rstrip()}" if err.strip() else "")


def _status(code: int | None, timed_out: float | None) -> str:
    if timed_out is not None:
        return f"Timed out after {timed_out:g} s; the command and its processes were killed."
    if code is None:
        return "Exit code: unknown"
    if code < 0:
        try:
            name = signals.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"Exit code: {code} (killed by {name})"
    return f"Exit code: {code}"


def _report(out: str, err: str, status: str) -> str:
    parts = []
    if out.strip():
        parts.append(out.rstrip("\n"))
    if err.strip():
        parts.append("stderr:\n" + err.rstrip("\n"))
    parts.append(status)
    return "\n".join(parts)


class Shell(Tool[ShellArgs]):
    name = "shell"
    facts = ToolFacts(
        kind="execute",
        verb="Run",
        primary_arg="command",
        advice="shell: builds, tests, git and other commands. Use non-interactive commands with "
        "bounded output (no pagers, no editors, no servers that never exit); set timeout_s for "
        "slow ones.",
    )
    description = (
        "Run a bash command in the workspace root (stdin is closed). Returns stdout, stderr and "
        f"the exit code. Times out after {DEFAULT_TIMEOUT_S:g} s unless timeout_s says otherwise. "
        "Processes the command leaves running are stopped when it ends; for servers or "
        "watchers use background: true."
    )
    Args = ShellArgs
    read_only: ClassVar[bool] = False

    def __init__(
        self,
        workspace: Workspace,
        sandbox: Sandbox = UNSANDBOXED,
        terminal: EditorTerminal | None = None,
    ) -> None:
        self.workspace = workspace
        self.sandbox = sandbox
        self.terminal = terminal  # a front end's terminals, where commands run when given

    def accesses(self, args: ShellArgs) -> ToolAccesses:
        return ToolAccesses.all()

    def approval_rule(self, args: ShellArgs) -> str:
        return f"shell({command_prefix(args.command)}:*)"

    def matches_rule(self, pattern: str, args: ShellArgs) -> bool:
        return shell_rule_matches(pattern, args.command)

    def rule_subjects(self, args: ShellArgs) -> tuple[ShellArgs, ...] | None:
        parts = command_parts(args.command)
        if parts is None:
            return None
        return tuple(args.model_copy(update={"command": part}) for part in parts)

    def runs_sandboxed(self, args: ShellArgs) -> bool:
        return self.sandbox.active and args.sandbox

    def leaves_sandbox(self, args: ShellArgs) -> bool:
        return self.sandbox.active and not args.sandbox

    def describe(self, args: ShellArgs) -> str:
        first = args.command.strip().splitlines()[0] if args.command.strip() else ""
        more = " ..." if "\n" in args.command.strip() else ""
        return (first[:200] + "...") if len(first) > 200 else first + more

    async def preview(self, args: ShellArgs) -> str:
        return args.command

    async def execute(self, args: ShellArgs, ctx: ToolContext) -> ToolResult:
        sandboxed = self.runs_sandboxed(args)
        sandbox = self.sandbox if sandboxed else UNSANDBOXED
        # A background command outlives its call, and so would the editor's terminal card.
        if self.terminal is not None and not args.background:
            return await self._in_terminal(self.terminal, args, sandbox, ctx)
        process = await spawn_group(
            sandbox.argv(args.command, self.workspace.root, own_session=False),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=self.workspace.root,
            env=sandbox.environment(_environment()),
        )
        group = process.pid  # a new session: its leader's pid is the group id
        part = None if ctx.spill_dir is None else spill_path(ctx.spill_dir, self.name, ctx.call_id)
        out = _Capture(None if part is None else part.with_suffix(".stdout.part"))
        err = _Capture(None if part is None else part.with_suffix(".stderr.part"))
        assert process.stdout is not None and process.stderr is not None
        readers = [
            asyncio.create_task(self._pump(process.stdout, out, "stdout", ctx)),
            asyncio.create_task(self._pump(process.stderr, err, "stderr", ctx)),
        ]
        timeout = args.timeout_s or (None if args.background else DEFAULT_TIMEOUT_S)
        aborted = asyncio.ensure_future(ctx.signal.wait())
        exited = _leader_exit(process)
        try:
            if args.background:
                ctx.detach(
                    f"Started in the background (pid {process.pid}). "
                    "You will be notified when it finishes."
                )
            watched: set[asyncio.Future[Any]] = {exited, aborted}
            finished, _ = await asyncio.wait(
                watched, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:  # whatever happened (even our own cancellation): no process of it survives
            aborted.cancel()
            exited.cancel()
            await terminate_group(group)
            # wait() also waits for the pipes to close; a process that left the group with
            # setsid could hold them forever, so both waits are bounded.
            reaped = asyncio.ensure_future(process.wait())
            await asyncio.wait([reaped, *readers], timeout=DRAIN_TIMEOUT_S)
            for task in (reaped, *readers):
                task.cancel()
            await out.close()
            await err.close()
        try:
            code = process.returncode
            if exited not in finished and ctx.signal.aborted:
                raise ToolAborted(_partial(out.text(), err.text()))
            timed_out = timeout if not finished else None
            status = _status(code, timed_out)
            report = _report(out.text(), err.text(), status)
            if sandboxed and code != 0 and looks_denied(report):
                report += retry_hint(self.sandbox)
            result = ToolResult(
                output=report,
                is_error=timed_out is not None or code != 0,
                display={"command": args.command, "exit_code": code},
            )
            if part is None or not (out.streamed or err.streamed):
                return result
            size, lines = await asyncio.to_thread(_save_whole, part, out, err, status)
            return spilled(result, self.name, ctx.call_id, part, (size, lines), report, report)
        finally:
            out.discard()
            err.discard()

    async def _in_terminal(
        self, terminal: EditorTerminal, args: ShellArgs, sandbox: Sandbox, ctx: ToolContext
    ) -> ToolResult:
        """The command in the front end's terminal, which shows its output as it comes."""
        unset = [word for name in keys.names() for word in ("-u", name)]
        argv = ["env", *unset, *sandbox.argv(args.command, self.workspace.root)]
        env = sandbox.environment({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
        try:
            terminal_id = await terminal.create(ctx.call_id, argv, self.workspace.root, env)
        except OSError as error:
            return ToolResult(output=f"The editor did not run the command: {error}", is_error=True)
        timeout = args.timeout_s or DEFAULT_TIMEOUT_S
        exited = asyncio.ensure_future(terminal.wait_for_exit(terminal_id))
        aborted = asyncio.ensure_future(ctx.signal.wait())
        try:
            finished, _ = await asyncio.wait(
                {exited, aborted}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if exited not in finished:
                await terminal.kill(terminal_id)
            printed = await terminal.output(terminal_id)
        finally:  # whatever happened (even our own cancellation): the editor ends the process
            exited.cancel()
            aborted.cancel()
            with contextlib.suppress(OSError, ConnectionError):
                await terminal.release(terminal_id)
        text = ("[… the editor kept only the end …]\n" if printed.truncated else "") + printed.text
        if exited not in finished and ctx.signal.aborted:
            raise ToolAborted(text)
        code = printed.exit_code
        if printed.signal is not None:  # as the tool's own run says it: a negative code
            number = signals.Signals.__members__.get(printed.signal)
            code = -number.value if number is not None else None
        timed_out = timeout if not finished else None
        report = _report(text, "", _status(code, timed_out))
        if sandbox.active and code != 0 and looks_denied(report):
            report += retry_hint(self.sandbox)
        return ToolResult(
            output=report,
            is_error=timed_out is not None or code != 0,
            display={"command": args.command, "exit_code": code},
        )

    @staticmethod
    async def _pump(
        stream: asyncio.StreamReader, capture: _Capture, name: str, ctx: ToolContext
    ) -> None:
        while chunk := await stream.read(65_536):
            text = await capture.add(chunk)
            if text:
                ctx.on_update(ToolUpdate(text=text, data={"stream": name}))
        await capture.add(b"", final=True)
