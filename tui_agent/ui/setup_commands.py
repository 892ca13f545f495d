"""The slash commands of the setup people bring: `/skills`, `/<skill-name>`, `/init`, `/memory`.

`/skills` lists the skills the model is offered (and the project's still waiting for trust);
each of them is also a command, `/<name> [request]`, that tells the model to use that skill.
`/init` asks the model to write the workspace's `AGENTS.md`: a normal turn, whose edit the
person approves as any other. `/memory` opens the memory files in `$VISUAL`/`$EDITOR` as a task
(Ctrl+G's way), so a running turn goes on streaming meanwhile; the files are read again by the
next session (the running one keeps the instructions it started with).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_agent.ui.app import TuiAgentApp

INIT_PROMPT = """\
Write an AGENTS.md at the root of this workspace for coding agents that will work here (if \
one exists, improve it; keep what is still true). Look at the project first: its README, \
build and package files, CI configuration, test layout, and any CLAUDE.md, .cursorrules or \
.github/copilot-instructions.md. Keep it short and specific to this project:
- the commands to build, lint, run all tests and run a single test;
- the architecture in a few lines: the main folders and what each owns;
- conventions the code follows that a newcomer would get wrong (style, naming, errors, tests);
- anything that must never be done here.
Do not invent commands or facts: write only what you verified in the files."""


def skills(app: TuiAgentApp, arg: str) -> None:
    app._call(_list_skills(app), "/skills")


async def _list_skills(app: TuiAgentApp) -> None:
    from tui_agent.session import SkillTrust, load_skills

    workspace = Path(app.loop.info.workspace)
    trust = SkillTrust(workspace, trust_all=app.loop.info.approval_mode == "yolo")
    setup = await asyncio.to_thread(load_skills, workspace, trust)
    lines = [f"/{s.name:<22}{s.description}  ({s.source})" for s in setup.skills]
    if not lines:
        lines = [
            "No skills. A skill is a folder with a SKILL.md in .tui-agent/skills/, "
            ".claude/skills/, ~/.claude/skills/ or skills/ beside config.toml."
        ]
    if setup.untrusted:
        waiting = ", ".join(s.name for s in setup.untrusted)
        lines.append(f"Not offered until you trust this workspace's skills: {waiting}")
    lines += [f"skipped: {problem}" for problem in setup.problems]
    app.vm.add_marker("info", "Skills (the model reads one when it needs it):\n" + "\n".join(lines))


def init(app: TuiAgentApp, arg: str) -> None:
    request = f"{INIT_PROMPT}\n\n{arg.strip()}" if arg.strip() else INIT_PROMPT
    app.prompt.submit(request, steer=False, words="/init " + arg.strip())


def memory(app: TuiAgentApp, arg: str) -> None:
    app._call(_open_memory(app), "/memory")


async def _open_memory(app: TuiAgentApp) -> None:
    from tui_agent.session._memory_files import project_memory_files, user_memory_files
    from tui_agent.ui.editor import open_in_editor

    workspace = Path(app.loop.info.workspace)
    found = await asyncio.to_thread(
        lambda: [p for p in user_memory_files() if p.is_file()] + project_memory_files(workspace)
    )
    files = found or [workspace / "AGENTS.md"]  # none yet: the workspace's, to start one
    try:
        await open_in_editor(app, files)
    except (OSError, RuntimeError) as exc:
        app.vm.add_marker("warning", f"the editor failed: {exc}")
        return
    shown = ", ".join(str(p) for p in files)
    app.vm.add_marker("info", f"memory files: {shown} (read again by the next session)")
