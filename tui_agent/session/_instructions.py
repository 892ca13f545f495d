"""The system prompt: how the agent should work, plus the project's own instruction files.

`AGENTS.md` (and `CLAUDE.md`, which many projects already have) at the workspace root are read
once per session and appended to the system prompt under their names. A very long file is cut
(with a note saying so) so that it cannot eat the context window.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTION_CHARS = 40_000


@dataclass(frozen=True)
class ProjectInstructions:
    name: str  # the file name, e.g. AGENTS.md
    text: str


def load_instructions(workspace: Path | str) -> list[ProjectInstructions]:
    root = Path(workspace)
    found: list[ProjectInstructions] = []
    seen: set[Path] = set()
    for name in INSTRUCTION_FILES:
        path = root / name
        try:
            real = path.resolve()
            if real in seen or not path.is_file():
                continue  # CLAUDE.md is often a symlink to AGENTS.md: read it once
            text = path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        seen.add(real)
        if not text:
            continue
        if len(text) > MAX_INSTRUCTION_CHARS:
            text = (
                text[:MAX_INSTRUCTION_CHARS]
                + f"\n\n[{name} was cut at {MAX_INSTRUCTION_CHARS} characters; read the file "
                "for the rest.]"
            )
        found.append(ProjectInstructions(name=name, text=text))
    return found


_INTRO = """\
You are tui-agent, an AI coding agent working in the user's terminal. You help with software \
engineering tasks in one workspace: reading and changing code, running commands, debugging, \
reviewing and explaining. You act through tools; the user sees every tool call and its result."""

# Advice per built-in tool, shown only for tools the session really has.
_TOOL_ADVICE = {
    "read_file": "read_file: read a file before you change it or make claims about it; use "
    "offset and limit for large files.",
    "edit_file": "edit_file: for focused changes. old_string must match the file exactly "
    "(whitespace included) and be unique unless replace_all is set; include enough context.",
    "write_file": "write_file: only for new files or complete rewrites.",
    "glob": "glob: find files by name pattern instead of guessing paths.",
    "grep": "grep: search file contents by regular expression to find definitions and uses.",
    "shell": "shell: builds, tests, git and other commands. Use non-interactive commands with "
    "bounded output (no pagers, no editors, no servers that never exit); set timeout_s for "
    "slow ones.",
    "todo_write": "todo_write: for a task of three or more steps, write a short plan first, "
    "keep exactly one step in_progress while you work, and mark each step completed as soon "
    "as it is done; skip it for quick, single-step requests.",
    "task": "task: delegate a self-contained job (a broad search, an investigation, an "
    "independent change) to a sub-agent with a fresh context; give it everything it needs in "
    "the prompt, and run independent jobs in parallel with several task calls in one step.",
}

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
        advice = [f"- {_TOOL_ADVICE[name]}" for name in tools if name in _TOOL_ADVICE]
        listing = f"# Tools\nYou can call: {', '.join(tools)}."
        sections.append("\n".join([listing, *advice]))
    sections.append(_WORK)
    if instructions:
        files = "\n\n".join(f"## {item.name}\n{item.text}" for item in instructions)
        sections.append(
            "# Project instructions\nThe workspace has instruction files. Follow them; they "
            "take precedence over the general guidance above, and the user's own requests "
            f"take precedence over them.\n\n{files}"
        )
    return "\n\n".join(sections)
