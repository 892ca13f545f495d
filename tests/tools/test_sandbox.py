"""The sandbox's wiring: policy from config and flags, what the shell tool tells approvals and
the model, sub-agents and `!command` in the same sandbox, and the state shown to the person.
(The attacks themselves are in test_sandbox_attacks.py.)"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_model import FakeModel, calls, text
from tui_agent.acp import _main as acp_main
from tui_agent.acp._agent import AcpAgent
from tui_agent.cli import _config, _parser
from tui_agent.context import EventLog
from tui_agent.loop.api import LoopInfo
from tui_agent.loop.factory import build_loop
from tui_agent.loop.reports import status_text
from tui_agent.session import LoopConfig, _open, open_loop, run_user_shell
from tui_agent.session._config import Config, ConfigError, parse_config
from tui_agent.session._open import sandbox_policy
from tui_agent.tools import (
    UNSANDBOXED,
    Sandbox,
    SandboxPolicy,
    Shell,
    ShellArgs,
    ToolContext,
    Workspace,
    default_registry,
    open_sandbox,
)
from tui_agent.ui.view_model import ViewModel
from tui_agent.vocab import AbortSignal, ToolResult


@pytest.fixture
def scratch() -> Iterator[Path]:
    """Outside /tmp, which bubblewrap replaces with a private one."""
    where = "/var/tmp" if os.path.isdir("/var/tmp") else None
    base = Path(tempfile.mkdtemp(prefix="tui-agent-sandbox-", dir=where)).resolve()
    (base / "ws").mkdir()
    yield base
    shutil.rmtree(base, ignore_errors=True)


def bwrap(mode: str = "workspace-write") -> Sandbox:
    sandbox = open_sandbox(SandboxPolicy(mode=mode), backends=("bwrap",))
    if sandbox.backend != "bwrap":
        pytest.skip(f"bubblewrap cannot start on this machine: {sandbox.problem}")
    return sandbox


async def run(box: Sandbox, workspace: Path, command: str, **args: object) -> ToolResult:
    root = Workspace(workspace)
    ctx = ToolContext(AbortSignal(), lambda update: None, lambda text: None, root, "c1")
    return await Shell(root, box).execute(ShellArgs(command=command, **args), ctx)


def test_a_sandboxed_command_never_reads_the_persons_bashrc(scratch: Path) -> None:
    # bash reads ~/.bashrc for `-c` when its standard input is a socket and SHLVL is unset (an
    # editor's terminal started by Node): what the rc file printed reached the command's output.
    home = scratch / "home"
    home.mkdir()
    (home / ".bashrc").write_text("echo from-the-bashrc\n")
    env = {**os.environ, "HOME": str(home)}
    env.pop("SHLVL", None)
    for box in (bwrap(), UNSANDBOXED):
        ours, theirs = socket.socketpair()
        with ours, theirs:
            done = subprocess.run(
                box.argv("echo from-the-command", scratch / "ws"),
                stdin=ours,
                capture_output=True,
                text=True,
                env=box.environment(env),
                timeout=60,
            )
        assert (done.stdout, done.returncode) == ("from-the-command\n", 0), done.stderr


# -- what the shell tool tells approvals and the model --------------------------------------


def test_only_an_active_sandbox_runs_a_call_sandboxed_or_lets_it_leave(tmp_path: Path) -> None:
    active = Sandbox(SandboxPolicy(), backend="bwrap", program="bwrap")
    unavailable = Sandbox(SandboxPolicy(), backend="none", problem="no user namespaces")
    off = Sandbox(SandboxPolicy(mode="off"), backend="none")
    inside, outside = ShellArgs(command="ls"), ShellArgs(command="ls", sandbox=False)
    seen = [
        (shell.runs_sandboxed(args), shell.leaves_sandbox(args))
        for shell in (Shell(Workspace(tmp_path), s) for s in (active, unavailable, off))
        for args in (inside, outside)
    ]
    assert seen == [(True, False), (False, True)] + [(False, False)] * 4


def test_the_model_sees_the_sandbox_argument_and_when_to_set_it_false(tmp_path: Path) -> None:
    [shell] = [s for s in default_registry(Workspace(tmp_path)).specs() if s.name == "shell"]
    argument = shell.parameters["properties"]["sandbox"]
    assert argument["type"] == "boolean" and argument["default"] is True
    assert "failed because of the sandbox" in argument["description"]
    assert "asks the person" in argument["description"]


async def test_a_denied_write_tells_the_model_it_may_retry_outside(scratch: Path) -> None:
    sandbox = bwrap()
    denied = await run(sandbox, scratch / "ws", f"echo x > {scratch}/out.txt")
    assert denied.is_error and '"sandbox": false' in denied.text
    assert "workspace-write sandbox" in denied.text
    fine = await run(sandbox, scratch / "ws", "echo x > in.txt")
    failed = await run(sandbox, scratch / "ws", "exit 3")
    assert '"sandbox": false' not in fine.text + failed.text  # only what reads like a denial


async def test_sandbox_false_runs_that_call_outside_the_sandbox(scratch: Path) -> None:
    result = await run(bwrap(), scratch / "ws", f"echo x > {scratch}/out.txt", sandbox=False)
    assert result.text == "Exit code: 0"
    assert (scratch / "out.txt").read_text() == "x\n"


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
async def test_read_only_keeps_the_workspace_unchanged_but_readable(
    scratch: Path, backend: str
) -> None:
    sandbox = open_sandbox(SandboxPolicy(mode="read-only"), backends=(backend,))
    if sandbox.backend != backend:
        pytest.skip(f"{backend} cannot start on this machine: {sandbox.problem}")
    (scratch / "ws" / "a.txt").write_text("alpha\n")
    result = await run(sandbox, scratch / "ws", "cat a.txt; echo x > b.txt")
    assert "alpha" in result.text and '"sandbox": false' in result.text
    assert not (scratch / "ws" / "b.txt").exists()


async def test_a_hidden_folder_inside_the_workspace_is_hidden_one_holding_it_is_not(
    scratch: Path,
) -> None:
    (scratch / "ws" / "vault").mkdir()
    (scratch / "ws" / "vault" / "key").write_text("KEY-0123456789\n")
    hide = (str(scratch), str(scratch / "ws" / "vault"))  # covering the first would cover all
    sandbox = open_sandbox(SandboxPolicy(hide=hide), backends=("bwrap",))
    if sandbox.backend != "bwrap":
        pytest.skip(f"bubblewrap cannot start on this machine: {sandbox.problem}")
    result = await run(sandbox, scratch / "ws", "cat vault/key; echo x > mine.txt")
    assert "KEY-" not in result.text
    assert (scratch / "ws" / "mine.txt").exists()


# -- where the policy comes from ------------------------------------------------------------


def test_config_keys_set_the_policy_and_a_bad_mode_names_the_key(tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    config = parse_config(
        'sandbox = "read-only"\nsandbox_network = true\nsandbox_hide = ["~/vault"]\n', file
    )
    assert (config.sandbox, config.sandbox_network, config.sandbox_hide) == (
        "read-only",
        True,
        ["~/vault"],
    )
    with pytest.raises(ConfigError, match="sandbox"):
        parse_config('sandbox = "strict"\n', file)


def test_the_flag_wins_over_config_and_tui_agents_folders_are_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUI_AGENT_HOME", str(tmp_path / "home"))
    args = _parser().parse_args(["--sandbox", "off", "--workspace", str(tmp_path)])
    policy = sandbox_policy(
        Config(sandbox="read-only", sandbox_hide=["~/x"]), _config(args).sandbox
    )
    assert policy.mode == "off"
    assert policy.hide == (str(tmp_path / "home"), str(tmp_path / "home"), "~/x")
    assert sandbox_policy(Config(sandbox="read-only"), None).mode == "read-only"
    assert sandbox_policy(Config(), None).mode == "workspace-write"  # the default


def test_where_no_backend_starts_the_sandbox_says_so_and_treats_commands_as_unsandboxed() -> None:
    sandbox = open_sandbox(SandboxPolicy(), backends=())
    assert sandbox.unavailable and not sandbox.active
    assert sandbox.label == "no sandbox"
    assert "unsandboxed" in sandbox.summary()


# -- sub-agents and !command ---------------------------------------------------------------


async def test_a_sub_agents_commands_run_in_the_parents_sandbox(scratch: Path) -> None:
    sandbox = bwrap()
    outside = scratch / "out.txt"
    # One task at a time: the parent's and the child's requests come in this order.
    model = FakeModel(
        [
            calls(("task", {"description": "write", "prompt": "CHILD JOB"}), prefix="p"),
            calls(("shell", {"command": f"echo x > {outside}"}), prefix="c"),
            text("Tried."),
            text("Done."),
        ]
    )
    service = await build_loop(
        provider=model,
        info=LoopInfo(
            "scripted", "m", 128_000, "yolo", "s", str(scratch / "ws"), False, (), sandbox
        ),
        workspace=scratch / "ws",
        spill_dir=scratch / "spill",
        log=EventLog(scratch / "events.jsonl"),
        system_prompt=lambda names: "You are a test agent.",
    )
    try:
        result = await (await service.submit("PARENT JOB: go")).result()
    finally:
        await service.close()
    assert result.type == "completed"
    child_result = model.requests[2].messages[-1].text
    assert "Read-only file system" in child_result
    assert not outside.exists()


async def test_a_bang_command_runs_in_the_sandbox(scratch: Path) -> None:
    outside = scratch / "out.txt"
    done = await run_user_shell(
        scratch / "ws", f"echo x > {outside}", AbortSignal(), lambda text: None, sandbox=bwrap()
    )
    assert "Read-only file system" in done.text and not outside.exists()
    await run_user_shell(scratch / "ws", f"echo x > {outside}", AbortSignal(), lambda text: None)
    assert outside.exists()  # no sandbox given: as before


# -- what the person sees -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sandbox", "label"),
    [
        (Sandbox(SandboxPolicy(), backend="bwrap", program="bwrap"), "sandbox"),
        (Sandbox(SandboxPolicy(mode="read-only"), backend="landlock"), "sandbox ro"),
        (Sandbox(SandboxPolicy(network=True), backend="bwrap", program="bwrap"), "sandbox net"),
        (Sandbox(SandboxPolicy(), backend="none", problem="none tried"), "no sandbox"),
        (UNSANDBOXED, "sandbox off"),
    ],
)
def test_the_status_bar_and_status_show_the_sandbox(sandbox: Sandbox, label: str) -> None:
    info = LoopInfo("scripted", "m", 1000, "ask", "s1", "/ws", False, (), sandbox)
    assert ViewModel(info, clock=lambda: 0.0).status.sandbox == label
    assert sandbox.summary() in status_text(info)


# -- opening a loop ------------------------------------------------------------------------------


def _loop_config(workspace: Path, **changes: object) -> LoopConfig:
    script = workspace.parent / "script.json"
    script.write_text('{"steps": [{"text": "hi"}]}')
    return LoopConfig(workspace=workspace, provider="scripted", script=str(script), **changes)


async def test_opening_a_loop_applies_the_flag_and_says_once_when_no_sandbox_can_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ws").mkdir()
    service = await open_loop(_loop_config(tmp_path / "ws", sandbox="read-only"))
    try:
        assert service.info.sandbox is not None
        assert service.info.sandbox.policy.mode == "read-only"
        assert not any("Sandbox" in notice for notice in service.info.notices)
    finally:
        await service.close()
    monkeypatch.setattr(_open, "open_sandbox", lambda policy: open_sandbox(policy, backends=()))
    service = await open_loop(_loop_config(tmp_path / "ws"))
    try:
        assert service.info.sandbox is not None and service.info.sandbox.unavailable
        [notice] = [notice for notice in service.info.notices if "Sandbox" in notice]
        assert "unavailable" in notice and "unsandboxed" in notice
    finally:
        await service.close()


def test_acp_takes_the_sandbox_flag_for_every_session_it_opens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    served: list[AcpAgent] = []

    async def serve(agent: AcpAgent) -> None:
        served.append(agent)

    monkeypatch.setattr(acp_main, "_serve", serve)
    assert acp_main.main(["--sandbox", "read-only"]) == 0
    assert served[0]._defaults.sandbox == "read-only"
    assert acp_main.main(["--sandbox", "strict"]) == 2  # a usage error
