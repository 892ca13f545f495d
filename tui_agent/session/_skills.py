"""Skills: folders with a `SKILL.md` that teach the agent a task, in Claude Code's format.

A skill is `<skills folder>/<name>/SKILL.md`: YAML front matter with `name` and `description`
(and Claude Code's optional `allowed-tools`), then Markdown instructions; other files of the
folder (scripts, references) come with it. Skills are found in the project's
`.tui-agent/skills/` and `.claude/skills/`, the person's `~/.claude/skills/`
(`$CLAUDE_CONFIG_DIR/skills`) and `skills/` beside `config.toml`; on a name found twice, the
first place in that order wins. The model sees names and descriptions only
(`build_system_prompt`); the `skill` tool gives a body when the model asks for it.

A project's skills come with its repository: they are offered only once the person trusted
them (`SkillTrust`, a `RepositoryItems` source for the start-up trust prompt); a changed skill
(its `SKILL.md` or any file beside it) asks again. A `SKILL.md` that cannot be used is a
problem to show, never a crash.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path

from tui_agent.lazy_dataclass import dataclass
from tui_agent.session._commands import CustomCommand
from tui_agent.session._front_matter import list_value, split_front_matter, text_value
from tui_agent.session._paths import AppPaths
from tui_agent.session._trust import FingerprintTrust, TrustLine, fingerprint
from tui_agent.tools import Skill as Skill  # re-exported: the front ends see no tools

PROJECT_FOLDERS = (".tui-agent/skills", ".claude/skills")
MAX_SKILL_BYTES = 256_000
MAX_DESCRIPTION = 1024  # Claude Code's bound; a longer one is cut
MAX_HASHED_BYTES = 4_000_000  # a skill's files hashed for its fingerprint; beyond: names only
_NAME = re.compile(r"^[a-z0-9][a-z0-9_:.-]{0,63}$", re.IGNORECASE)


@dataclass(frozen=True)
class SkillSetup:
    skills: tuple[Skill, ...]  # offered to the model
    untrusted: tuple[Skill, ...]  # the project's, not trusted yet
    problems: tuple[str, ...]  # unusable SKILL.md files, for the person


def claude_skills_folder() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else Path.home() / ".claude") / "skills"


def skill_folders(workspace: Path, paths: AppPaths | None = None) -> list[tuple[Path, str, bool]]:
    """Every place skills are looked for, in order: (folder, label, comes with the project)."""
    home = (paths or AppPaths.from_env()).config_file.parent / "skills"
    return [
        *((workspace / folder, folder, True) for folder in PROJECT_FOLDERS),
        (claude_skills_folder(), "~/.claude/skills", False),
        (home, str(home), False),
    ]


def load_skills(
    workspace: Path, trust: SkillTrust | None = None, paths: AppPaths | None = None
) -> SkillSetup:
    """The skills to offer, the project's still waiting for trust, and what went wrong."""
    trust = trust or SkillTrust(workspace)
    offered: dict[str, Skill] = {}
    untrusted: list[Skill] = []
    problems: list[str] = []
    for folder, label, project in skill_folders(workspace, paths):
        for skill in _skills_in(folder, label, problems):
            if project and not trust.trusted(skill):
                untrusted.append(skill)
            elif skill.name not in offered:
                offered[skill.name] = skill
    return SkillSetup(tuple(offered.values()), tuple(untrusted), tuple(problems))


def available_skills(workspace: Path, *, trust_all: bool = False) -> list[Skill]:
    """The skills this workspace offers now (trusted ones only; `trust_all`: `--yolo`), by
    name: for front ends that list or announce them (`/<skill-name>`, ACP's commands)."""
    setup = load_skills(workspace, SkillTrust(workspace, trust_all=trust_all))
    return sorted(setup.skills, key=lambda skill: skill.name)


def skill_notices(setup: SkillSetup) -> tuple[str, ...]:
    """What the person should hear at start: unusable skills, and the project's waiting for
    trust (not offered to the model until then)."""
    waiting = ", ".join(skill.name for skill in setup.untrusted)
    return (
        *setup.problems,
        *(
            [
                f"the project's skills {waiting} are not offered to the model until you trust "
                "this workspace's skills"
            ]
            if waiting
            else []
        ),
    )


def skill_prompt(skill: Skill) -> str:
    """What `/<skill-name>` sends (what followed the command comes after it): the model is
    told to use that skill."""
    return f"Use the {skill.name} skill: call the skill tool with name {skill.name!r} first."


def skill_commands(skills: Sequence[Skill], taken: set[str]) -> list[CustomCommand]:
    """`/<skill-name> [request]` for each skill whose name no command holds yet (the app's
    completion and ACP's available commands)."""
    return [
        CustomCommand(
            name=skill.name,
            description=f"skill: {skill.description}",
            argument_hint="[request]",
            body=skill_prompt(skill),
            path=skill.folder / "SKILL.md",
        )
        for skill in skills
        if skill.name not in taken
    ]


def parse_skill(path: Path, text: str, source: str) -> Skill:
    """A `SKILL.md`; raises `ValueError` saying what is wrong."""
    meta, body = split_front_matter(text)
    if not meta:
        raise ValueError("no front matter: it needs `name` and `description` between --- lines")
    name = text_value(meta, "name") or path.parent.name
    if not _NAME.match(name):
        raise ValueError(f"{name!r} is not a usable skill name (letters, digits, - and _)")
    description = text_value(meta, "description")
    if not description:
        raise ValueError("no `description`: the model could not know when to use it")
    if not body.strip():
        raise ValueError("the instructions after the front matter are empty")
    return Skill(
        name=name,
        description=description[:MAX_DESCRIPTION],
        body=body.strip("\n"),
        folder=path.parent,
        source=source,
        allowed_tools=list_value(meta, "allowed-tools"),
    )


def _skills_in(folder: Path, label: str, problems: list[str]) -> list[Skill]:
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*/SKILL.md")):
        try:
            if path.stat().st_size > MAX_SKILL_BYTES:
                raise ValueError(f"larger than {MAX_SKILL_BYTES // 1000} KB")
            found.append(parse_skill(path, path.read_text(encoding="utf-8"), label))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            problems.append(f"skill {path}: {exc}; skipped")
    return found


class SkillTrust(FingerprintTrust[Skill]):
    """The project skills a person trusted in one workspace (`trust_all`: `--yolo`); a
    `RepositoryItems` source for the start-up trust prompt."""

    FILE = "skill-trust.json"

    def _pending(self) -> tuple[Skill, ...]:
        return load_skills(self._workspace, self, self._paths).untrusted

    def _fingerprint(self, skill: Skill) -> str:
        return _fingerprint(skill)

    def _line(self, skill: Skill) -> TrustLine:
        return TrustLine("skill", skill.name, f"{skill.description} ({skill.source})")


def _fingerprint(skill: Skill) -> str:
    # What the skill tells the model and every file it brings (a changed script asks again).
    digest = hashlib.sha256()
    budget = MAX_HASHED_BYTES
    for path in sorted(p for p in skill.folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(skill.folder).as_posix().encode() + b"\0")
        try:
            size = path.stat().st_size
            if size <= budget:
                digest.update(path.read_bytes())
                budget -= size
        except OSError:
            continue
    return fingerprint(skill.source, skill.name, skill.description, skill.body, digest.hexdigest())
