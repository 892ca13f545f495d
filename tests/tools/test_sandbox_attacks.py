"""Attacks on the real sandbox, no mocks: each runs the `shell` tool's own command under every
backend this machine can start, and once with the sandbox off, where the same attack must
succeed (so none of these tests passes for want of trying).

Landlock holds the filesystem rules only (see `tools/_sandbox.py`): the network, daemon and
/proc attacks run against bubblewrap. A backend that cannot start here is skipped, saying why.
The scratch folders live under /var/tmp, not /tmp: bubblewrap gives each command a /tmp of its
own, which would hide a /tmp target for the wrong reason. Waits are bounded polling on what
the test observes (a file, a process), never sleeps followed by an assert.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.processes import WAIT_S, gone, kill_all_with, processes_with
from tui_agent.session._config import Config
from tui_agent.session._open import sandbox_policy
from tui_agent.tools import (
    Sandbox,
    SandboxPolicy,
    Shell,
    ShellArgs,
    ToolAborted,
    ToolContext,
    Workspace,
    open_sandbox,
)
from tui_agent.vocab import AbortSignal, ToolResult

EVERY = ["bwrap", "landlock", "off"]  # attacks on the filesystem
BWRAP = ["bwrap", "off"]  # attacks Landlock does not claim to stop


@dataclass(frozen=True)
class Box:
    workspace: Path
    outside: Path  # a folder beside the workspace
    home: Path  # $HOME for the command, with secrets in it
    app_home: Path  # TUI_AGENT_HOME


@pytest.fixture
def box(monkeypatch: pytest.MonkeyPatch) -> Iterator[Box]:
    scratch = "/var/tmp" if os.path.isdir("/var/tmp") else None
    base = Path(tempfile.mkdtemp(prefix="tui-agent-attack-", dir=scratch)).resolve()
    made = Box(base / "ws", base / "outside", base / "home", base / "app")
    for folder in (made.workspace, made.outside, made.home / ".ssh", made.app_home / "sessions"):
        folder.mkdir(parents=True)
    (made.outside / "file.txt").write_text("original\n")
    (made.home / ".ssh" / "id_rsa").write_text("SSH-KEY-0123456789\n")
    (made.home / ".netrc").write_text("machine example.com password NETRC-0123456789\n")
    (made.home / ".aws").mkdir()
    (made.home / ".aws" / "credentials").write_text("aws_secret_access_key=AWS-0123456789\n")
    (made.home / "vault").mkdir()
    (made.home / "vault" / "token").write_text("VAULT-0123456789\n")
    (made.app_home / "sessions" / "events.jsonl").write_text('{"text": "SESSION-0123456789"}\n')
    monkeypatch.setenv("HOME", str(made.home))
    monkeypatch.setenv("TUI_AGENT_HOME", str(made.app_home))
    yield made
    shutil.rmtree(base, ignore_errors=True)


def sandbox_of(kind: str, *, network: bool = False, hide: tuple[str, ...] = ()) -> Sandbox:
    if kind == "off":
        return open_sandbox(SandboxPolicy(mode="off"))
    sandbox = open_sandbox(SandboxPolicy(network=network, hide=hide), backends=(kind,))
    if sandbox.backend != kind:
        pytest.skip(f"{kind} cannot start on this machine: {sandbox.problem}")
    return sandbox


async def run(sandbox: Sandbox, workspace: Path, command: str, **args: object) -> ToolResult:
    root = Workspace(workspace)
    ctx = ToolContext(AbortSignal(), lambda update: None, lambda text: None, root, "attack")
    return await Shell(root, sandbox).execute(ShellArgs(command=command, **args), ctx)


def ended(token: str, kind: str) -> bool:
    """Whether what `token` marks has gone (waiting for it, a hang guard). With the sandbox off
    it must still run, which shows at once: waiting out the guard would prove nothing more."""
    return gone(token) if kind != "off" else not processes_with(token)


def unique_seconds() -> str:
    """A `sleep` length no other process on the machine is likely to use: it marks ours."""
    return str(random.randint(1_000_000, 9_999_999))


# -- the filesystem --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", EVERY)
async def test_writes_outside_the_workspace_fail(box: Box, kind: str) -> None:
    command = (
        f"echo pwned > {box.outside}/new.txt; echo pwned >> {box.outside}/file.txt; "
        f"rm -f {box.outside}/file.txt.keep; mkdir {box.home}/made; echo ok > inside.txt"
    )
    (box.outside / "file.txt.keep").write_text("keep\n")
    await run(sandbox_of(kind), box.workspace, command)
    assert (box.workspace / "inside.txt").read_text() == "ok\n"  # the workspace stays writable
    escaped = [
        (box.outside / "new.txt").exists(),
        (box.outside / "file.txt").read_text() != "original\n",
        not (box.outside / "file.txt.keep").exists(),
        (box.home / "made").exists(),
    ]
    assert escaped == [kind == "off"] * 4


@pytest.mark.parametrize("kind", EVERY)
async def test_symlinks_out_of_the_workspace_do_not_lead_out(box: Box, kind: str) -> None:
    (box.workspace / "to_file").symlink_to(box.outside / "file.txt")
    (box.workspace / "to_dir").symlink_to(box.outside)
    command = (
        f"echo pwned > to_file; echo pwned > to_dir/new.txt; "
        f"ln -s {box.outside} made_link && echo pwned > made_link/made.txt"
    )
    await run(sandbox_of(kind), box.workspace, command)
    escaped = [
        (box.outside / "file.txt").read_text() != "original\n",
        (box.outside / "new.txt").exists(),
        (box.outside / "made.txt").exists(),
    ]
    assert escaped == [kind == "off"] * 3


@pytest.mark.parametrize("kind", EVERY)
async def test_secrets_in_home_and_tui_agents_own_folder_are_unreadable(
    box: Box, kind: str
) -> None:
    # The policy the command line builds: tui-agent's folders and `sandbox_hide` join the
    # usual secrets.
    policy = sandbox_policy(Config(sandbox_hide=["~/vault"]), None)
    sandbox = sandbox_of(kind, hide=policy.hide)
    command = (
        f"cat ~/.ssh/id_rsa ~/.netrc ~/.aws/credentials ~/vault/token; "
        f"cat {box.app_home}/sessions/events.jsonl; grep -rs 0123456789 ~ {box.app_home}"
    )
    result = await run(sandbox, box.workspace, command)
    leaked = [name for name in ("SSH", "NETRC", "AWS", "VAULT", "SESSION") if name in result.text]
    assert leaked == ([] if kind != "off" else ["SSH", "NETRC", "AWS", "VAULT", "SESSION"])


# -- the network -----------------------------------------------------------------------------------


def _connected(server: socket.socket) -> bool:
    """Whether a connection is waiting to be accepted (the kernel completed it already)."""
    server.setblocking(False)
    try:
        accepted, _ = server.accept()
    except BlockingIOError:
        return False
    accepted.close()
    return True


@pytest.mark.parametrize("kind", BWRAP)
async def test_a_server_on_the_hosts_loopback_is_unreachable(box: Box, kind: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        result = await run(sandbox_of(kind), box.workspace, command)
        assert _connected(server) == (kind == "off"), result.text


async def test_sandbox_network_lets_commands_reach_the_network(box: Box) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        result = await run(sandbox_of("bwrap", network=True), box.workspace, command)
        assert _connected(server), result.text


# -- processes -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", BWRAP)
@pytest.mark.parametrize(
    "daemon",
    [
        "setsid sleep {t} </dev/null >/dev/null 2>&1 &",
        # the classic daemon: fork, setsid, fork again, the middle one exits
        "(setsid sh -c 'sleep {t} & exit' </dev/null >/dev/null 2>&1 &)",
    ],
    ids=["setsid", "double-fork"],
)
async def test_no_daemon_outlives_its_command(box: Box, kind: str, daemon: str) -> None:
    seconds = unique_seconds()
    # The command returns only once its daemon runs, so the daemon had its chance.
    started = f"until pgrep -f '^sleep {seconds}$' >/dev/null; do sleep 0.01; done"
    try:
        command = f"{daemon.format(t=seconds)}\n{started}"
        result = await run(sandbox_of(kind), box.workspace, command)
        assert result.text.endswith("Exit code: 0"), result.text
        assert ended(seconds, kind) == (kind != "off")
    finally:
        kill_all_with(seconds)


AGENT = """
import asyncio, sys
from pathlib import Path
from tui_agent.tools import Shell, ShellArgs, ToolContext, Workspace, SandboxPolicy, open_sandbox
from tui_agent.vocab import AbortSignal

kind, root, command = sys.argv[1:4]
policy = SandboxPolicy(mode="off" if kind == "off" else "workspace-write")
sandbox = open_sandbox(policy, backends=(kind,))
workspace = Workspace(Path(root))
context = ToolContext(AbortSignal(), lambda u: None, lambda t: None, workspace, "attack")
asyncio.run(Shell(workspace, sandbox).execute(ShellArgs(command=command), context))
"""


@pytest.mark.parametrize("kind", BWRAP)
async def test_kill_9_of_the_agent_ends_every_process_of_its_command(box: Box, kind: str) -> None:
    sandbox_of(kind)  # skips where it cannot start
    daemon, child = unique_seconds(), unique_seconds()
    command = (
        f"setsid sleep {daemon} </dev/null >/dev/null 2>&1 & sleep {child} & "
        f"until pgrep -f '^sleep {daemon}$' >/dev/null; do sleep 0.01; done; touch ready; wait"
    )
    agent = await asyncio.create_subprocess_exec(
        *(sys.executable, "-c", AGENT, kind, str(box.workspace), command),
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    try:
        deadline = time.monotonic() + 60
        while not (box.workspace / "ready").exists() and agent.returncode is None:
            assert time.monotonic() < deadline, "the command never started"
            await asyncio.sleep(0.02)
        assert agent.returncode is None, "the agent ended before it was killed"
        agent.kill()
        await agent.wait()
        assert gone(child)  # the reaper ends the command's process group either way...
        assert ended(daemon, kind) == (kind != "off")  # ...only the sandbox also ends what left it
    finally:
        kill_all_with(daemon)
        kill_all_with(child)


@pytest.mark.parametrize("kind", BWRAP)
async def test_the_agents_proc_environ_is_unreadable(box: Box, kind: str) -> None:
    command = f"tr '\\0' '\\n' < /proc/{os.getpid()}/environ | grep -c '^HOME='"
    result = await run(sandbox_of(kind), box.workspace, command)
    assert result.text.startswith("1\n") == (kind == "off"), result.text


@pytest.mark.parametrize("kind", BWRAP)
async def test_cancelling_a_command_ends_its_daemons_too(box: Box, kind: str) -> None:
    seconds = unique_seconds()
    command = (
        f"setsid sleep {seconds} </dev/null >/dev/null 2>&1 &\n"
        f"until pgrep -f '^sleep {seconds}$' >/dev/null; do sleep 0.01; done; touch ready; wait"
    )
    root = Workspace(box.workspace)
    abort = AbortSignal()
    ctx = ToolContext(abort, lambda update: None, lambda text: None, root, "attack")
    call = asyncio.ensure_future(
        Shell(root, sandbox_of(kind)).execute(ShellArgs(command=command), ctx)
    )
    try:
        deadline = time.monotonic() + 60
        while not (box.workspace / "ready").exists() and not call.done():
            assert time.monotonic() < deadline, "the command never started"
            await asyncio.sleep(0.02)
        abort.abort("cancelled by the test")
        with pytest.raises(ToolAborted):
            await call
        assert ended(seconds, kind) == (kind != "off")
    finally:
        kill_all_with(seconds)


def _group(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    return int(stat.rsplit(b")", 1)[1].split()[2])


async def test_every_process_of_a_sandboxed_command_is_in_the_group_a_cancel_kills(
    box: Box,
) -> None:
    # A cancel or the reaper kills the command's process group. bubblewrap's sandbox init used
    # to leave it for a session of its own: a kill that landed while bubblewrap was still
    # setting the sandbox up then ended only the outer bwrap, and the init lived on to run
    # the command. (That moment lasts milliseconds, so the test checks the groups instead.)
    seconds = unique_seconds()
    root = Workspace(box.workspace)
    abort = AbortSignal()
    ctx = ToolContext(abort, lambda update: None, lambda text: None, root, "attack")
    command = ShellArgs(command=f"sleep {seconds}")
    call = asyncio.ensure_future(Shell(root, sandbox_of("bwrap")).execute(command, ctx))
    try:
        deadline = time.monotonic() + WAIT_S
        while not processes_with(f"sleep\0{seconds}\0"):  # `sleep` itself, not a launcher
            assert time.monotonic() < deadline and not call.done(), "the command never started"
            await asyncio.sleep(0.02)
        processes = processes_with(seconds)  # the outer bwrap, the sandbox's init, the command
        assert len(processes) == 3
        assert len({_group(pid) for pid in processes}) == 1  # the outer bwrap's
        abort.abort("cancelled by the test")
        with pytest.raises(ToolAborted):
            await call
        assert gone(seconds)
    finally:
        kill_all_with(seconds)
