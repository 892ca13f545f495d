"""The setup people bring, in the app: a command's `` !`cmd` `` output in its prompt (allowed
by its `allowed-tools`, which also limit its turn; approved by sending it again; refused until
a project's commands are trusted), `/help` naming a command a built-in hides, `/skills` and
`/<skill-name>`, `/init` and `/memory`."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.ui.real_loop import until
from tests.ui.test_flows import app_on, send
from tests.ui.test_prompt_power import markers, user_texts
from tui_agent.loop.api import LoopApi
from tui_agent.session import CommandTrust
from tui_agent.ui.setup_commands import INIT_PROMPT

STATUS = "---\nallowed-tools: Bash(echo:*)\n---\nState:\n!`echo from-the-shell`\nSummarise it."


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".tui-agent/commands").mkdir(parents=True)
    return root


def tool_texts(loop: LoopApi) -> list[str]:
    return [e.message.text for e in loop.history() if e.message.role == "tool"]


def command(workspace: Path, name: str, text: str) -> None:
    (workspace / f".tui-agent/commands/{name}.md").write_text(text)


async def test_a_command_output_goes_into_its_prompt(workspace: Path) -> None:
    command(workspace, "state", STATUS)
    CommandTrust(workspace).trust()
    push = {"tool_calls": [{"name": "shell", "arguments": {"command": "git push"}}]}
    async with app_on([push, {"text": "ok"}], workspace, approval_mode="ask") as (app, pilot, loop):
        await until(pilot, lambda: bool(app.power.commands))
        await send(pilot, "/state")
        await until(pilot, lambda: not app.vm.busy and len(tool_texts(loop)) == 1)
    (sent,) = user_texts(loop)
    assert sent == "State:\nfrom-the-shell\nSummarise it."
    # The command's allowed-tools limit its turn: no approval asked, the push refused.
    (pushed,) = tool_texts(loop)
    assert "is not among the tools this command allows (Bash(echo:*))" in pushed


async def test_a_command_no_rule_allows_runs_once_sent_again(workspace: Path) -> None:
    command(workspace, "state", STATUS.replace("Bash(echo:*)", "Read"))
    CommandTrust(workspace).trust()
    async with app_on([{"text": "ok"}], workspace, approval_mode="ask") as (app, pilot, loop):
        await until(pilot, lambda: bool(app.power.commands))
        await send(pilot, "/state")
        await until(pilot, lambda: "send /state again to run it" in markers(app))
        assert user_texts(loop) == []
        await send(pilot, "/state")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
    assert "from-the-shell" in user_texts(loop)[0]


async def test_an_untrusted_project_command_runs_nothing(workspace: Path) -> None:
    marker = workspace / "ran"
    command(workspace, "state", f"!`touch {marker}`")
    async with app_on([{"text": "ok"}], workspace, approval_mode="ask") as (app, pilot, loop):
        await until(pilot, lambda: bool(app.power.commands))
        await send(pilot, "/state")
        await until(pilot, lambda: "not trusted yet" in markers(app))
    assert user_texts(loop) == [] and not marker.exists()


async def test_help_names_a_command_a_built_in_hides(workspace: Path) -> None:
    command(workspace, "model", "Which model are you?")
    async with app_on([{"text": "ok"}], workspace) as (app, pilot, loop):
        await until(pilot, lambda: bool(app.power.commands))
        await send(pilot, "/help")
        await until(pilot, lambda: "hidden by the built-in /model" in markers(app))
        assert "type /project:model to run it" in markers(app)
        await send(pilot, "/project:model")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
    assert user_texts(loop) == ["Which model are you?"]


async def test_skills_are_listed_and_one_is_used_by_its_name(
    workspace: Path, _isolated_home: Path
) -> None:
    skill = _isolated_home / "skills/changelog"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: changelog\ndescription: Write entries\n---\nBody")
    project = workspace / ".claude/skills/deploy"
    project.mkdir(parents=True)
    (project / "SKILL.md").write_text("---\nname: deploy\ndescription: Ship\n---\nBody")
    async with app_on([{"text": "ok"}], workspace) as (app, pilot, loop):  # --yolo: trusted
        await until(pilot, lambda: bool(app.power.commands))
        assert [c.name for c in app.power.commands] == ["changelog", "deploy"]
        await send(pilot, "/skills")
        await until(pilot, lambda: "/changelog" in markers(app))
        await send(pilot, "/changelog for 2.0")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
    assert "Write entries" in markers(app)
    assert user_texts(loop) == [
        "Use the changelog skill: call the skill tool with name 'changelog' first.\n\nfor 2.0"
    ]


async def test_init_asks_the_model_for_an_agents_file(workspace: Path) -> None:
    async with app_on([{"text": "ok"}], workspace) as (app, pilot, loop):
        await send(pilot, "/init mention the Makefile")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
    assert user_texts(loop) == [f"{INIT_PROMPT}\n\nmention the Makefile"]


async def test_memory_opens_the_memory_files_in_the_editor(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "CLAUDE.md").write_text("old\n")
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nfor f in "$@"; do echo edited >> "$f"; done\n')
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("VISUAL", str(editor))
    async with app_on([{"text": "ok"}], workspace) as (app, pilot, _loop):
        await send(pilot, "/memory")
        await until(pilot, lambda: "memory files:" in markers(app))
    assert (workspace / "CLAUDE.md").read_text() == "old\nedited\n"


async def test_an_at_path_in_a_command_attaches_the_file(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("the attached words\n")
    command(workspace, "look", "Summarise @notes.txt")
    async with app_on([{"text": "ok"}], workspace) as (app, pilot, loop):
        await until(pilot, lambda: bool(app.power.commands))
        await send(pilot, "/look")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
    (sent,) = user_texts(loop)
    assert sent.startswith("Summarise @notes.txt") and "the attached words" in sent
