"""Approvals: modes, the older rule forms (tool names and "shell: prefix"), asking, headless
denial. The rule syntax itself is tested in test_rules.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tui_agent.tools import (
    ApprovalMode,
    ApprovalRequest,
    Approvals,
    Decision,
    EditFile,
    ReadFile,
    Shell,
    Workspace,
    WriteFile,
    command_prefix,
)
from tui_agent.tools._edits import EditFileArgs, WriteFileArgs
from tui_agent.tools._files import ReadFileArgs
from tui_agent.tools._shell import ShellArgs


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    return Workspace(tmp_path)


def shell(command: str) -> ShellArgs:
    return ShellArgs(command=command)


MODE_TABLE: list[tuple[ApprovalMode, str, bool]] = [
    ("ask", "read_file", True),
    ("ask", "edit_file", False),
    ("ask", "write_file", False),
    ("ask", "shell", False),
    ("auto-edit", "read_file", True),
    ("auto-edit", "edit_file", True),
    ("auto-edit", "write_file", True),
    ("auto-edit", "shell", False),
    ("yolo", "read_file", True),
    ("yolo", "edit_file", True),
    ("yolo", "write_file", True),
    ("yolo", "shell", True),
]


@pytest.mark.parametrize(("mode", "tool_name", "allowed"), MODE_TABLE)
def test_each_mode_allows_what_it_should_without_asking(
    workspace: Workspace, mode: ApprovalMode, tool_name: str, allowed: bool
) -> None:
    tools = {
        "read_file": (ReadFile(workspace), ReadFileArgs(path="notes.txt")),
        "edit_file": (
            EditFile(workspace),
            EditFileArgs(path="notes.txt", old_string="alpha", new_string="gamma"),
        ),
        "write_file": (WriteFile(workspace), WriteFileArgs(path="x.txt", content="x")),
        "shell": (Shell(workspace), shell("ls")),
    }
    tool, args = tools[tool_name]
    assert Approvals(mode).allows(tool, args) is allowed


@pytest.mark.parametrize(
    ("rule", "command", "allowed"),
    [
        ("shell: git status", "git status", True),
        ("shell: git status", "git status -s", True),
        ("shell: git status", "  git   status  --short ", True),
        ("shell: git status", "git statusx", False),
        ("shell: git status", "git", False),
        ("shell: git status", "git push", False),
        ("shell: git status", "git status; rm -rf .", False),
        ("shell: git status", "git status && rm -rf .", False),
        ("shell: git status", "git status || true", False),
        ("shell: git status", "git status | sh", False),
        ("shell: git status", "git status `rm -rf .`", False),
        ("shell: git status", "git status $(rm -rf .)", False),
        ("shell: git status", "git status > ~/.bashrc", False),
        ("shell: git status", "git status 2>&1 >/dev/null", True),
        ("shell: git status", "git status & rm -rf .", False),
        ("shell: git status", "git status\nrm -rf .", False),
        ("shell: pytest", "pytest -q tests/tools", True),
        ("shell: pytest", "pytest-watch", False),
        ("shell", "anything at all; even chained", True),
        ("read_file", "git status", False),
    ],
)
def test_shell_rules_match_whole_leading_words_of_simple_commands(
    workspace: Workspace, rule: str, command: str, allowed: bool
) -> None:
    approvals = Approvals("ask", rules=[rule])
    assert approvals.allows(Shell(workspace), shell(command)) is allowed


def test_a_tool_name_rule_allows_every_call_of_that_tool(workspace: Workspace) -> None:
    approvals = Approvals("ask", rules=["edit_file"])
    args = EditFileArgs(path="notes.txt", old_string="a", new_string="b")
    assert approvals.allows(EditFile(workspace), args)
    assert not approvals.allows(WriteFile(workspace), WriteFileArgs(path="x", content=""))


def test_an_older_path_rule_allows_only_that_path(workspace: Workspace) -> None:
    approvals = Approvals("ask", rules=["write_file: x.txt"])
    assert approvals.allows(WriteFile(workspace), WriteFileArgs(path="x.txt", content=""))
    assert not approvals.allows(WriteFile(workspace), WriteFileArgs(path="y.txt", content=""))


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("git status -s", "git status"),
        ("npm run build", "npm run"),
        ("pytest -q tests", "pytest"),
        ("ls -la", "ls"),
        ("git -C x status", "git"),
        ("make test", "make test"),
    ],
)
def test_always_remembers_the_program_and_its_subcommand(
    workspace: Workspace, command: str, prefix: str
) -> None:
    assert command_prefix(command) == prefix
    assert Approvals("ask", rules=[f"shell({prefix}:*)"]).allows(Shell(workspace), shell(command))


async def test_headless_runs_deny_with_how_to_allow(workspace: Workspace) -> None:
    result = await Approvals("ask").review(Shell(workspace), shell("git push"), "c1", lambda: None)
    assert result is not None and result.is_error
    assert "--yolo" in result.text
    assert '"shell(git push:*)"' in result.text
    assert "[permissions] allow" in result.text


async def test_read_only_tools_never_ask(workspace: Workspace) -> None:
    async def ask(request: ApprovalRequest) -> Decision:
        raise AssertionError("asked")

    approvals = Approvals("ask", ask=ask)
    verdict = await approvals.review(
        ReadFile(workspace), ReadFileArgs(path="notes.txt"), "c1", lambda: None
    )
    assert verdict is None


async def test_approve_once_allows_this_call_only(workspace: Workspace) -> None:
    asked: list[ApprovalRequest] = []

    async def ask(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision.once()

    approvals = Approvals("ask", ask=ask)
    assert await approvals.review(Shell(workspace), shell("git push"), "c1", lambda: None) is None
    assert await approvals.review(Shell(workspace), shell("git push"), "c2", lambda: None) is None
    assert len(asked) == 2
    assert approvals.rules == ()


async def test_approve_always_adds_the_rule_for_the_session(workspace: Workspace) -> None:
    asked: list[ApprovalRequest] = []

    async def ask(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision.always()

    approvals = Approvals("ask", ask=ask)
    await approvals.review(Shell(workspace), shell("git status"), "c1", lambda: None)
    verdict = await approvals.review(Shell(workspace), shell("git status -s"), "c2", lambda: None)
    assert verdict is None
    assert len(asked) == 1
    assert approvals.rules == ("shell(git status:*)",)


async def test_a_denial_carries_the_users_reason_to_the_model(workspace: Workspace) -> None:
    async def ask(request: ApprovalRequest) -> Decision:
        return Decision.deny("use the staging branch")

    approvals = Approvals("ask", ask=ask)
    result = await approvals.review(Shell(workspace), shell("git push"), "c1", lambda: None)
    assert result is not None and result.is_error
    assert result.text == 'The user denied "shell" (git push). Their reason: use the staging branch'


async def test_the_request_shows_a_diff_for_an_edit(workspace: Workspace) -> None:
    requests: list[ApprovalRequest] = []

    async def ask(request: ApprovalRequest) -> Decision:
        requests.append(request)
        return Decision.once()

    waiting: list[str] = []
    args = EditFileArgs(path="notes.txt", old_string="beta", new_string="BETA")
    await Approvals("ask", ask=ask).review(
        EditFile(workspace), args, "call_7", lambda: waiting.append("waiting")
    )
    request = requests[0]
    assert (request.call_id, request.tool_name, request.description) == (
        "call_7",
        "edit_file",
        "notes.txt",
    )
    assert request.rule == "edit_file"
    assert "-beta\n+BETA\n" in request.preview
    assert request.preview.startswith("--- a/notes.txt\n+++ b/notes.txt\n")
    assert waiting == ["waiting"]


async def test_the_request_shows_the_command_for_shell(workspace: Workspace) -> None:
    requests: list[ApprovalRequest] = []

    async def ask(request: ApprovalRequest) -> Decision:
        requests.append(request)
        return Decision.once()

    await Approvals("ask", ask=ask).review(Shell(workspace), shell("make test"), "c1", lambda: None)
    assert requests[0].preview == "make test"
    assert requests[0].rule == "shell(make test:*)"
    assert requests[0].rules == ("shell(make test:*)",)


async def test_questions_are_put_one_at_a_time_and_always_covers_the_waiting_ones(
    workspace: Workspace,
) -> None:
    answer = asyncio.Event()
    asked: list[str] = []

    async def ask(request: ApprovalRequest) -> Decision:
        asked.append(request.call_id)
        await answer.wait()
        return Decision.always()

    approvals = Approvals("ask", ask=ask)
    tool = Shell(workspace)
    first = asyncio.create_task(approvals.review(tool, shell("pytest -x"), "c1", lambda: None))
    second = asyncio.create_task(approvals.review(tool, shell("pytest -q"), "c2", lambda: None))
    for _ in range(10):
        await asyncio.sleep(0)
    assert asked == ["c1"]
    answer.set()
    assert await first is None
    assert await second is None
    assert asked == ["c1"]


def test_the_mode_can_change_during_a_session(workspace: Workspace) -> None:
    approvals = Approvals("ask")
    approvals.mode = "yolo"
    assert approvals.allows(Shell(workspace), shell("rm -rf build"))
