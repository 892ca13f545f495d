"""Custom slash commands: Markdown prompt templates the user keeps in files.

A file `review.md` in `.tui-agent/commands/` (the project's), `.claude/commands/` (so Claude
Code users bring theirs) or `commands/` beside `config.toml` (the user's own) becomes
`/review`; a file in a sub-folder `git/commit.md` becomes `/git:commit`. Optional front matter
gives a `description` (shown in completion and `/help`) and an `argument-hint`. Running the
command sends the file's body with `$ARGUMENTS` replaced by what followed the command (and `$1`,
`$2`, … by its words). The project's files win over the user's, ours over `.claude`'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tui_agent.session._paths import AppPaths

PROJECT_FOLDERS = (".tui-agent/commands", ".claude/commands")
MAX_COMMAND_BYTES = 256_000
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
_POSITIONAL = re.compile(r"\$(\d+)")


@dataclass(frozen=True)
class CustomCommand:
    name: str  # without the slash: "review", "git:commit"
    description: str
    argument_hint: str
    body: str
    path: Path

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


@dataclass(frozen=True)
class CommandProblem:
    path: Path
    message: str


def load_custom_commands(
    workspace: Path, paths: AppPaths | None = None
) -> tuple[list[CustomCommand], list[CommandProblem]]:
    """Every custom command, by name (sorted), and the files that could not be read."""
    home = (paths or AppPaths.from_env()).config_file.parent / "commands"
    folders = [workspace / folder for folder in PROJECT_FOLDERS] + [home]
    found: dict[str, CustomCommand] = {}
    problems: list[CommandProblem] = []
    for folder in folders:
        for path in _markdown_files(folder):
            name = ":".join(path.relative_to(folder).with_suffix("").parts)
            if name in found:
                continue  # an earlier folder wins
            if not _NAME.match(name):
                problems.append(CommandProblem(path, f"'{name}' is not a usable command name"))
                continue
            try:
                command = parse_command(name, path, _read(path))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                problems.append(CommandProblem(path, str(exc)))
                continue
            found[name] = command
    return sorted(found.values(), key=lambda c: c.name), problems


def parse_command(name: str, path: Path, text: str) -> CustomCommand:
    meta, body = _front_matter(text)
    if not body.strip():
        raise ValueError("the command's prompt is empty")
    first_line = next((line.strip("# ").strip() for line in body.splitlines() if line.strip()), "")
    return CustomCommand(
        name=name,
        description=meta.get("description") or first_line[:80],
        argument_hint=meta.get("argument-hint", ""),
        body=body.strip("\n"),
        path=path,
    )


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    """`---`-fenced `key: value` lines at the top (the part of YAML these files use)."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i, line in enumerate(lines[1:], start=1) if line.strip() == "---"), None)
    if end is None:
        raise ValueError("front matter opened with --- is never closed")
    meta: dict[str, str] = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(":")
        if sep and key.strip():
            meta[key.strip().lower()] = value.strip().strip("\"'")
    return meta, "\n".join(lines[end + 1 :])


def _markdown_files(folder: Path) -> Iterable[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*.md") if p.is_file())


def _read(path: Path) -> str:
    if path.stat().st_size > MAX_COMMAND_BYTES:
        raise ValueError(f"larger than {MAX_COMMAND_BYTES // 1000} KB")
    return path.read_text(encoding="utf-8")
