"""The shell tool: results, streaming, timeout, cancel, background, and no orphaned processes."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.tools.tool_fakes import Recorder, call, collect, executor
from tui_agent.tools import Shell, ToolAborted, ToolContext, Workspace
from tui_agent.tools._shell import ShellArgs
from tui_agent.vocab import AbortSignal, ToolResult, ToolUpdate


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as handle:
            stat = handle.read()
    except (ProcessLookupError, FileNotFoundError):
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def group_of(pgid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(name))
    return found


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


class Ctx:
    def __init__(self, workspace: Workspace) -> None:
        self.updates: list[ToolUpdate] = []
        self.acks: list[str] = []
        self.signal = AbortSignal()
        self.changed = asyncio.Event()
        self.context = ToolContext(self.signal, self._update, self.acks.append, workspace, "c1")

    def _update(self, update: ToolUpdate) -> None:
        self.updates.append(update)
        self.changed.set()

    def output(self) -> str:
        return "".join(u.text for u in self.updates)

    async def wait_for(self, text: str) -> None:
        while text not in self.output():
            self.changed.clear()
            await self.changed.wait()


async def run(
    workspace: Workspace, command: str, ctx: Ctx | None = None, **kw: object
) -> ToolResult:
    ctx = ctx or Ctx(workspace)
    args = ShellArgs.model_validate({"command": command, **kw})
    return await Shell(workspace).execute(args, ctx.context)


async def test_exit_code_and_stderr_are_in_the_result(workspace: Workspace) -> None:
    result = await run(workspace, "echo out; echo err >&2; exit 3")
    assert result.is_error
    assert result.text == "out\nstderr:\nerr\nExit code: 3"
    assert result.display == {"command": "echo out; echo err >&2; exit 3", "exit_code": 3}


async def test_a_successful_command_is_not_an_error(workspace: Workspace) -> None:
    result = await run(workspace, "printf 'a\\nb\\n'")
    assert not result.is_error
    assert result.text == "a\nb\nExit code: 0"


async def test_a_command_killed_by_a_signal_says_which(workspace: Workspace) -> None:
    result = await run(workspace, "kill -KILL $$")
    assert result.is_error
    assert result.text.endswith("(killed by SIGKILL)")


async def test_output_is_streamed_through_updates(workspace: Workspace) -> None:
    ctx = Ctx(workspace)
    await run(workspace, "echo one; echo two >&2", ctx)
    streams = {u.data["stream"]: u.text for u in ctx.updates}
    assert streams == {"stdout": "one\n", "stderr": "two\n"}


async def test_it_runs_in_the_workspace_with_stdin_closed(workspace: Workspace) -> None:
    result = await run(workspace, "pwd; cat; echo done")
    assert result.text == f"{workspace.root}\ndone\nExit code: 0"


async def test_provider_keys_do_not_reach_the_command(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-should-not-leak")
    result = await run(workspace, 'echo "${OPENAI_API_KEY:-none} ${ANTHROPIC_API_KEY:-none}"')
    assert result.text.startswith("none none")


async def test_a_timeout_kills_the_group_and_reports_it(workspace: Workspace) -> None:
    ctx = Ctx(workspace)
    result = await run(workspace, "echo $$; sleep 30 & sleep 30; wait", ctx, timeout_s=0.3)
    pgid = int(ctx.output().split()[0])
    assert result.is_error
    assert "Timed out after 0.3 s" in result.text
    assert group_of(pgid) == []


async def test_cancel_leaves_no_process_of_the_group_alive(workspace: Workspace) -> None:
    ctx = Ctx(workspace)
    command = 'sleep 30 & echo "$$ $!"; sleep 30; wait'
    task = asyncio.create_task(run(workspace, command, ctx))
    await ctx.wait_for("\n")
    members = [int(pid) for pid in ctx.output().split()]  # bash (the group leader), first sleep
    pgid = members[0]
    ctx.signal.abort("user_cancelled")
    with pytest.raises(ToolAborted):
        await task
    assert [pid for pid in members if alive(pid)] == []
    assert group_of(pgid) == []


async def test_cancel_through_the_executor_reports_the_interruption(tmp_path: Path) -> None:
    workspace_root = tmp_path / "ws"
    recorder = Recorder()
    ex = executor(tmp_path, Shell(Workspace(workspace_root.parent / "ws")))
    signal = AbortSignal()
    command = 'echo "$$"; sleep 30 & sleep 30; wait'
    task = asyncio.create_task(
        collect(ex, [call("shell", "sh", command=command)], recorder, signal)
    )
    pgid = int((await recorder.first_update("sh")).split()[0])
    signal.abort("user_cancelled")
    results = await task
    assert results[0][1].text.startswith('The user manually interrupted "shell"')
    assert group_of(pgid) == []


async def test_processes_left_running_are_stopped_when_the_command_ends(
    workspace: Workspace,
) -> None:
    result = await run(workspace, "sleep 30 & echo $!")
    leftover = int(result.text.split()[0])
    assert not alive(leftover)


async def test_background_detaches_with_the_pid_and_reports_at_the_end(
    workspace: Workspace,
) -> None:
    ctx = Ctx(workspace)
    command = "echo started; while [ ! -f go ]; do sleep 0.02; done; echo finished"
    task = asyncio.create_task(run(workspace, command, ctx, background=True))
    await ctx.wait_for("started")
    assert len(ctx.acks) == 1
    assert ctx.acks[0].startswith("Started in the background (pid ")
    assert ctx.acks[0].endswith("You will be notified when it finishes.")
    assert not task.done()
    (workspace.root / "go").touch()
    result = await task
    assert result.text == "started\nfinished\nExit code: 0"


async def test_closing_the_executor_kills_background_commands(tmp_path: Path) -> None:
    recorder = Recorder()
    (tmp_path / "ws").mkdir()
    ex = executor(tmp_path, Shell(Workspace(tmp_path / "ws")), grace=5)
    command = 'echo "$$"; sleep 30'
    task = asyncio.create_task(
        collect(ex, [call("shell", "bg", command=command, background=True)], recorder)
    )
    pgid = int((await recorder.first_update("bg")).split()[0])
    assert "bg" in recorder.detached
    await ex.aclose()
    results = await task
    assert results[0][1].is_error
    assert group_of(pgid) == []


def test_rules_remember_the_program_and_subcommand(workspace: Workspace) -> None:
    tool = Shell(workspace)
    assert tool.approval_rule(ShellArgs(command="git status -s")) == "shell(git status:*)"
    assert tool.matches_rule("git status:*", ShellArgs(command="git status --short"))
    assert not tool.matches_rule("git status", ShellArgs(command="git status --short"))  # exact
    assert tool.rule_subjects(ShellArgs(command="git status; rm -rf .")) == (
        ShellArgs(command="git status"),
        ShellArgs(command="rm -rf ."),
    )


def test_describe_shows_the_first_line_of_the_command(workspace: Workspace) -> None:
    tool = Shell(workspace)
    assert tool.describe(ShellArgs(command="make\nmake test")) == "make ..."
    assert tool.describe(ShellArgs(command="ls -la")) == "ls -la"


async def test_a_group_ignoring_sigterm_is_killed_after_the_grace(workspace: Workspace) -> None:
    ctx = Ctx(workspace)
    command = "trap '' TERM; sleep 30 & echo \"$$ $!\"; wait"
    task = asyncio.create_task(run(workspace, command, ctx))
    await ctx.wait_for("\n")
    members = [int(pid) for pid in ctx.output().split()]
    ctx.signal.abort("user_cancelled")
    with pytest.raises(ToolAborted):
        await task
    assert [pid for pid in members if alive(pid)] == []
    assert group_of(members[0]) == []


def _read(path: Path) -> str:
    return path.read_text()


async def test_a_ten_megabyte_output_is_whole_in_the_spill_file(tmp_path: Path) -> None:
    command = (
        "python3 -c \"import sys\nfor n in range(1_000_000): sys.stdout.write(f'{n:09d}\\n')\"; "
        "echo warning >&2"
    )
    results = await collect(
        executor(tmp_path, Shell(Workspace(tmp_path / "ws"))), [call("shell", command=command)]
    )

    result = results[0][1]
    assert result.spill is not None
    spill_file = Path(result.spill.output_path)
    whole = _read(spill_file)
    expected_out = "".join(f"{n:09d}\n" for n in range(1_000_000))
    assert whole == expected_out + "\nstderr:\nwarning\n\nExit code: 0"
    assert result.spill.total_chars == len(whole)
    assert f"output_size_chars: {len(whole)}" in result.text
    assert result.text.endswith("warning\nExit code: 0")
    assert os.listdir(tmp_path / "spill") == [spill_file.name]  # the part files are gone
