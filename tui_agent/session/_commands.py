"""Custom slash commands: Markdown prompt templates the user keeps in files.

A file `review.md` in `.tui-agent/commands/` (the project's), `.claude/commands/` (so Claude
Code users bring theirs) or `commands/` beside `config.toml` (the user's own) becomes
`/review`; a file in a sub-folder `git/commit.md` becomes `/git:commit`. Optional front matter
gives a `description` (shown in completion and `/help`) and an `argument-hint` (Claude Code's
YAML, see `_front_matter`). Running the command sends the file's body with `$ARGUMENTS` replaced
by what followed the command (and `$1`, `$2`, … by its words); each `` !`cmd` `` in it is
replaced by that command's output first (run by the app, see `ui.custom_run`), and an `@path`
in it attaches the file like one typed in the prompt. The project's files win over the user's,
ours over `.claude`'s. A project's command that runs `!` commands comes with the repository: it
runs them only once trusted (`CommandTrust`). `allowed-tools` limit the turn the command
starts (`Approvals.limit_turn`); `model` runs that turn on the named model, resolved as `/model`
resolves a name (`session._turn_models`), and the turns after it on the session's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.lazy_dataclass import dataclass
from tui_agent.session._front_matter import list_value, split_front_matter, text_value
from tui_agent.session._paths import AppPaths
from tui_agent.session._trust import FingerprintTrust, TrustLine, fingerprint

if TYPE_CHECKING:
    from tui_agent.tools import Effect

PROJECT_FOLDERS = (".tui-agent/commands", ".claude/commands")
MAX_COMMAND_BYTES = 256_000
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
_POSITIONAL = re.compile(r"\$(\d+)")
_SHELL = re.compile(r"!`([^`\n]+)`")  # Claude Code's `` !`git status` `` in a command's body


@dataclass(frozen=True)
class CustomCommand:
    name: str  # without the slash: "review", "git:commit"
    description: str
    argument_hint: str
    body: str
    path: Path
    project: bool = False  # came with the repository
    allowed_tools: tuple[str, ...] = ()
    model: str = ""

    @property
    def shell_commands(self) -> tuple[str, ...]:
        """The `` !`cmd` `` commands its body runs, in order."""
        return tuple(match.group(1).strip() for match in _SHELL.finditer(self.body))

    def expand(self, arguments: str) -> str:
        """The prompt this command sends with `arguments` (what followed `/name`)."""
        words = arguments.split()
        text = _POSITIONAL.sub(
            lambda m: words[int(m.group(1)) - 1] if 0 < int(m.group(1)) <= len(words) else "",
            self.body,
        )
        if "$ARGUMENTS" in text:
            return text.replace("$ARGUMENTS", arguments.strip())
        if arguments.strip() and not _POSITIONAL.search(self.body):
            return f"{text.rstrip()}\n\n{arguments.strip()}"  # arguments are never dropped
        return text


def shell_verdicts(
    workspace: Path,
    commands: Iterable[str],
    rules: Iterable[tuple[Effect, str]],
    allowed_tools: Iterable[str] = (),
) -> dict[str, Effect | None]:
    """What the permission rules in force (`(effect, text)`, the active ones) and a command's
    own `allowed-tools` (allow rules, as in Claude Code) say about each `` !`cmd` ``: "allow"
    runs it, "deny" refuses it, anything else asks the person first."""
    from tui_agent.tools import UNSANDBOXED, Ruleset, Shell, ShellArgs, Workspace, parse_rule

    ruleset = Ruleset()
    for effect, text in [*rules, *(("allow", text) for text in allowed_tools)]:
        try:
            ruleset.add(parse_rule(text, effect))
        except ValueError:
            continue  # a front matter entry that is no rule allows nothing
    shell = Shell(Workspace(workspace), UNSANDBOXED)
    return {c: ruleset.decide(shell, ShellArgs(command=c)).effect for c in commands}


def with_outputs(prompt: str, output: Callable[[str], str]) -> str:
    """`prompt` with each `` !`cmd` `` replaced by `output(cmd)`."""
    return _SHELL.sub(lambda match: output(match.group(1).strip()), prompt)


@dataclass(frozen=True)
class CommandProblem:
    path: Path
    message: str


def load_custom_commands(
    workspace: Path, paths: AppPaths | None = None
) -> tuple[list[CustomCommand], list[CommandProblem]]:
    """Every custom command, by name (sorted), and the files that could not be read."""
    home = (paths or AppPaths.from_env()).config_file.parent / "commands"
    folders = [(workspace / folder, True) for folder in PROJECT_FOLDERS] + [(home, False)]
    found: dict[str, CustomCommand] = {}
    problems: list[CommandProblem] = []
    for folder, project in folders:
        for path in _markdown_files(folder):
            name = ":".join(path.relative_to(folder).with_suffix("").parts)
            if name in found:
                continue  # an earlier folder wins
            if not _NAME.match(name):
                problems.append(CommandProblem(path, f"'{name}' is not a usable command name"))
                continue
            try:
                command = parse_command(name, path, _read(path), project=project)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                problems.append(CommandProblem(path, str(exc)))
                continue
            found[name] = command
    return sorted(found.values(), key=lambda c: c.name), problems


def parse_command(name: str, path: Path, text: str, *, project: bool = False) -> CustomCommand:
    meta, body = split_front_matter(text)
    if not body.strip():
        raise ValueError("the command's prompt is empty")
    first_line = next((line.strip("# ").strip() for line in body.splitlines() if line.strip()), "")
    return CustomCommand(
        name=name,
        description=text_value(meta, "description") or first_line[:80],
        argument_hint=text_value(meta, "argument-hint"),
        body=body.strip("\n"),
        path=path,
        project=project,
        allowed_tools=list_value(meta, "allowed-tools"),
        model=text_value(meta, "model"),
    )


def _markdown_files(folder: Path) -> Iterable[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*.md") if p.is_file())


def _read(path: Path) -> str:
    if path.stat().st_size > MAX_COMMAND_BYTES:
        raise ValueError(f"larger than {MAX_COMMAND_BYTES // 1000} KB")
    return path.read_text(encoding="utf-8")


class CommandTrust(FingerprintTrust[CustomCommand]):
    """The project commands with `` !`cmd` `` lines a person trusted in one workspace
    (`trust_all`: `--yolo`); a `RepositoryItems` source for the start-up trust prompt. A
    command whose file changed asks again."""

    FILE = "command-trust.json"

    def trusted(self, command: CustomCommand) -> bool:
        if not command.project or not command.shell_commands:
            return True  # it runs nothing, or it is the person's own
        return super().trusted(command)

    def _pending(self) -> list[CustomCommand]:
        found, _ = load_custom_commands(self._workspace, self._paths)
        return [command for command in found if not self.trusted(command)]

    def _fingerprint(self, command: CustomCommand) -> str:
        # Its name and everything it sends and runs.
        return fingerprint(command.name, command.body)

    def _line(self, command: CustomCommand) -> TrustLine:
        return TrustLine("command", f"/{command.name}", "runs " + "; ".join(command.shell_commands))
