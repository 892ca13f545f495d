"""The system prompt: how the agent should work, the skills it may open, and the memory files
(`AGENTS.md`, `CLAUDE.md`: see `_memory_files`, which reads them) under their paths.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop.tool_facts import tool_facts

if TYPE_CHECKING:  # the tools layer loads later than the first frame
    from tui_agent.tools import Skill


@dataclass(frozen=True)
class ProjectInstructions:
    name: str  # where the file is, as the model reads it: AGENTS.md, ~/.claude/CLAUDE.md
    text: str


_INTRO = """\
You are tui-agent, an AI coding agent working in the user's terminal. You help with software \
engineering tasks in one workspace: reading and changing code, running commands, debugging, \
reviewing and explaining. You act through tools; the user sees every tool call and its result."""

_WORK = """\
# How to work
- First understand the request and the code it touches; follow the project's existing \
conventions, style, libraries and tests.
- Make the smallest change that fully solves the task. Do not make unrelated changes, and do \
not leave debugging code behind.
- Verify your work: run the relevant tests, linters or the program itself when you can, and \
fix what fails. If you cannot verify something, say so.
- Never invent file contents, APIs or command output. If you are unsure, look.
- Call independent tools together in one step (for example, reading several files).
- A tool result that starts with <system>ERROR means the tool failed: read the message and \
change your approach rather than repeating the same call.
- Ask the user only when a decision is truly theirs; otherwise keep going until the task is \
done.
- Do not take destructive or irreversible actions (deleting files, git reset, force push, \
changing history) unless the user asked for them.
- Never print, log or commit secrets such as API keys.

# Communication
- Be concise and direct; no filler, no flattery. Use Markdown; refer to code as path:line.
- When you finish, say in a few lines what you changed, how you verified it, and what is left.
- Text inside <system>...</system> or <system-reminder> tags comes from the agent runtime, \
not from the user."""


def build_system_prompt(
    workspace: Path | str,
    instructions: Sequence[ProjectInstructions],
    tool_names: Sequence[str],
    *,
    today: date | None = None,
    skills: Sequence[Skill] = (),
) -> str:
    tools = list(tool_names)
    sections = [
        _INTRO,
        "# Environment\n"
        f"- Workspace root: {workspace}. Paths in tool arguments are relative to it; access "
        "outside it is refused.\n"
        f"- Today's date: {(today or date.today()).isoformat()}. "
        f"Platform: {platform.system() or 'unknown'}.",
    ]
    if tools:
        # Each tool's own advice (`Tool.facts`), only for tools the session really has.
        advice = [f"- {facts.advice}" for name in tools if (facts := tool_facts(name)).advice]
        listing = f"# Tools\nYou can call: {', '.join(tools)}."
        sections.append("\n".join([listing, *advice]))
    sections.append(_WORK)
    if skills:
        sections.append(skills_prompt(skills))
    if instructions:
        files = "\n\n".join(f"## {item.name}\n{item.text}" for item in instructions)
        sections.append(
            "# Project instructions\nThese instruction files apply (the person's own first, "
            "then the repository's from its root down to the workspace). Follow them; they "
            "take precedence over the general guidance above, later files over earlier ones, "
            f"and the user's own requests take precedence over them.\n\n{files}"
        )
    return "\n\n".join(sections)


def skills_prompt(skills: Sequence[Skill]) -> str:
    """The skills' section: each skill's name and description, never its body (the `skill`
    tool gives that when the model asks)."""
    lines = [f"- {skill.name}: {skill.description}" for skill in skills]
    return (
        "# Skills\nSkills are instructions for particular tasks, with files beside them. When "
        "a task matches a skill's description, call the skill tool with its name first and "
        "follow what it says.\n" + "\n".join(lines)
    )
