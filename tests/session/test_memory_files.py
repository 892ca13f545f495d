"""Memory files: the person's, then the repository's from its root down to the workspace, with
`@imports` (bounded, no cycles, never from outside), sizes bounded, and a sub-folder's joining
when the agent first touches a file there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui_agent.loop.service import AgentLoopService
from tui_agent.session import LoopConfig, load_instructions, open_loop
from tui_agent.session._memory_files import MAX_TOTAL_CHARS, NestedMemory


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def test_memory_loads_the_persons_then_root_down_to_the_workspace(
    repo: Path, _isolated_home: Path
) -> None:
    workspace = repo / "services/api"
    workspace.mkdir(parents=True)
    (_isolated_home / "AGENTS.md").write_text("mine")
    (_isolated_home / "claude").mkdir()
    (_isolated_home / "claude/CLAUDE.md").write_text("claude user")
    (repo / "AGENTS.md").write_text("root agents")
    (repo / "CLAUDE.local.md").write_text("root local")
    (repo / "services/CLAUDE.md").write_text("services")
    (workspace / "AGENTS.md").write_text("api")
    (workspace / "deeper").mkdir()
    (workspace / "deeper/AGENTS.md").write_text("below: later")

    found = load_instructions(workspace)

    assert [(item.name, item.text) for item in found] == [
        (str(_isolated_home / "AGENTS.md"), "mine"),
        (str(_isolated_home / "claude/CLAUDE.md"), "claude user"),
        ("AGENTS.md", "root agents"),
        ("CLAUDE.local.md", "root local"),
        ("services/CLAUDE.md", "services"),
        ("services/api/AGENTS.md", "api"),
    ]


def test_imports_follow_the_file_and_a_cycle_stops(repo: Path) -> None:
    (repo / "docs").mkdir()
    (repo / "AGENTS.md").write_text("Read @docs/style.md for style.\n")
    (repo / "docs/style.md").write_text("Tabs.\nSee @../AGENTS.md and @./more.md\n")
    (repo / "docs/more.md").write_text("More.\n@./style.md")

    found = load_instructions(repo)

    assert [item.name for item in found] == ["AGENTS.md", "docs/style.md", "docs/more.md"]
    assert "not imported: it imports itself through a cycle" in found[1].text
    assert "not imported: it imports itself through a cycle" in found[2].text


def test_an_import_goes_at_most_five_deep(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("@m1.md")
    for level in range(1, 8):
        (repo / f"m{level}.md").write_text(f"level {level} @m{level + 1}.md")

    names = [item.name for item in load_instructions(repo)]

    assert names == ["AGENTS.md", "m1.md", "m2.md", "m3.md", "m4.md", "m5.md"]
    assert "at most 5 levels deep" in load_instructions(repo)[-1].text


def test_an_import_from_outside_repository_and_home_is_refused_visibly(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "outside.md").write_text("steal")
    (repo / "AGENTS.md").write_text("@../outside.md and @decorator and @types/node")

    (item,) = load_instructions(repo)

    assert "@../outside.md was not imported: only files inside the repository" in item.text
    assert "steal" not in item.text


def test_a_huge_memory_is_cut_with_a_note(repo: Path) -> None:
    for name in ("AGENTS.md", "CLAUDE.md", "CLAUDE.local.md", "x.md"):
        (repo / name).write_text("y" * 39_000 + (" @x.md" if name == "AGENTS.md" else ""))

    found = load_instructions(repo)

    assert sum(len(item.text) for item in found) < MAX_TOTAL_CHARS + 500
    assert "limited to" in found[-1].text


def test_a_sub_folder_memory_joins_once_when_a_file_there_is_touched(repo: Path) -> None:
    (repo / "web/ui").mkdir(parents=True)
    (repo / "web/AGENTS.md").write_text("web rules")
    (repo / "web/ui/CLAUDE.md").write_text("ui rules")
    nested = NestedMemory(repo)

    note = nested.note_for("web/ui/button.tsx")
    again = nested.note_for("web/ui/other.tsx")
    resumed = NestedMemory(repo, NestedMemory.loaded_in([note or ""]))

    assert note is not None and note.index("web rules") < note.index("ui rules")
    assert again is None
    assert resumed.note_for("web/page.tsx") is None
    assert nested.note_for("top.py") is None


async def test_a_read_in_a_sub_folder_brings_its_memory_once_across_a_resume(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "lib").mkdir(parents=True)
    (workspace / "lib/AGENTS.md").write_text("lib: no globals")
    (workspace / "lib/a.py").write_text("a = 1\n")
    read = {"tool_calls": [{"name": "read_file", "arguments": {"path": "lib/a.py"}}]}
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [read, read, {"text": "ok"}]}))

    def config(**more: object) -> LoopConfig:
        return LoopConfig(workspace=workspace, provider="scripted", script=str(script), **more)  # type: ignore[arg-type]

    def notes(loop: AgentLoopService) -> list[str | None]:
        return [e.meta.note for e in loop.history() if e.message.role == "tool"]

    loop = await open_loop(config())
    await (await loop.submit("read it")).result()
    await loop.close()
    assert [n is not None and "lib: no globals" in n for n in notes(loop)] == [True, False]

    script.write_text(json.dumps({"steps": [read, {"text": "ok"}]}))
    resumed = await open_loop(config(continue_latest=True))
    await (await resumed.submit("again")).result()
    await resumed.close()
    assert notes(resumed)[2:] == [None]
