"""`skill`: the model opens one of the skills it was told about.

A skill is a folder with a `SKILL.md` (found and parsed by the session, see
`session.load_skills`). The system prompt names each skill with its description only; this tool
gives the body when the model decides a skill fits (progressive disclosure), with the list of
the files beside it. A skill may live outside the workspace (`~/.claude/skills/`), where
`read_file` cannot go, so the tool also reads one of those files itself (`file`), never
anything outside the skill's folder.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from tui_agent.lazy_dataclass import dataclass
from tui_agent.tools._accesses import ToolAccesses
from tui_agent.tools._base import Tool, ToolArgs, ToolContext
from tui_agent.vocab import ToolFacts, ToolResult, error_result

MAX_LISTED_FILES = 100
MAX_FILE_CHARS = 100_000
_SKIPPED_DIRS = {".git", "__pycache__", "node_modules", ".venv"}


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str  # the Markdown after the front matter
    folder: Path  # the folder holding SKILL.md
    source: str  # where it was found, for people: ".claude/skills", "~/.claude/skills"
    allowed_tools: tuple[str, ...] = ()  # Claude Code's `allowed-tools`, as given


class SkillArgs(ToolArgs):
    name: str = Field(description="The skill's name, as the system prompt lists it.")
    file: str | None = Field(
        default=None,
        description="A file of the skill (a path the skill's listing gives) to read instead "
        "of its instructions.",
    )


class SkillTool(Tool[SkillArgs]):
    name: ClassVar[str] = "skill"
    facts: ClassVar[ToolFacts] = ToolFacts(
        kind="read",
        verb="Use skill",
        primary_arg="name",
        advice="skill: when a task matches one of the skills listed below, call skill with its "
        "name before you start, then follow its instructions.",
    )
    description: ClassVar[str] = (
        "Open a skill: returns its instructions and the files beside it (scripts, references, "
        "templates). With `file`, returns that file of the skill instead."
    )
    Args = SkillArgs
    read_only: ClassVar[bool] = True

    def __init__(self, skills: Sequence[Skill]) -> None:
        self._skills = {skill.name: skill for skill in skills}

    def accesses(self, args: SkillArgs) -> ToolAccesses:
        return ToolAccesses.none()

    def describe(self, args: SkillArgs) -> str:
        return f"skill {args.name}" + (f" {args.file}" if args.file else "")

    async def execute(self, args: SkillArgs, ctx: ToolContext) -> ToolResult:
        # A folder walk and a file read: off the event loop.
        return await asyncio.to_thread(self._answer, args)

    def _answer(self, args: SkillArgs) -> ToolResult:
        skill = self._skills.get(args.name)
        if skill is None:
            known = ", ".join(sorted(self._skills)) or "none"
            return error_result(f"No skill named {args.name!r} (skills: {known}).")
        if args.file is not None:
            return _read_file(skill, args.file)
        files = _files_of(skill.folder)
        listing = "\n".join(f"- {path}" for path in files) or "(none)"
        return ToolResult(
            output=(
                f"<skill name={skill.name!r} folder={str(skill.folder)!r}>\n{skill.body.strip()}"
                f"\n</skill>\n\nFiles of this skill (read one with skill(name={skill.name!r}, "
                f"file=PATH); run a script by its full path under {skill.folder}):\n{listing}"
            )
        )


def _files_of(folder: Path) -> list[str]:
    found: list[str] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in sorted(names):
            relative = (Path(root) / name).relative_to(folder).as_posix()
            if relative != "SKILL.md":
                found.append(relative)
            if len(found) >= MAX_LISTED_FILES:
                return [*found, f"(more files not listed: the first {MAX_LISTED_FILES} shown)"]
    return found


def _read_file(skill: Skill, file: str) -> ToolResult:
    folder = skill.folder.resolve()
    path = (folder / file).resolve()
    if not path.is_relative_to(folder):
        return error_result(f"{file!r} is not inside the skill's folder {skill.folder}.")
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return error_result(f"Cannot read {file!r} of skill {skill.name!r}: {exc.strerror}.")
    if len(text) > MAX_FILE_CHARS:
        text = text[:MAX_FILE_CHARS] + f"\n[cut at {MAX_FILE_CHARS} characters]"
    return ToolResult(output=text)
