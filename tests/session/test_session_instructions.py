"""The system prompt and the workspace's AGENTS.md / CLAUDE.md."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from tui_agent.session import ProjectInstructions, build_system_prompt, load_instructions
from tui_agent.session._memory_files import MAX_FILE_CHARS as MAX_INSTRUCTION_CHARS


def test_agents_and_claude_files_are_loaded_in_that_order(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("Use tabs.\n")
    (tmp_path / "AGENTS.md").write_text("Run make test before finishing.\n")

    found = load_instructions(tmp_path)

    assert found == [
        ProjectInstructions("AGENTS.md", "Run make test before finishing."),
        ProjectInstructions("CLAUDE.md", "Use tabs."),
    ]


def test_a_claude_file_linked_to_agents_is_read_once(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("One rule.\n")
    (tmp_path / "CLAUDE.md").symlink_to(tmp_path / "AGENTS.md")

    assert [item.name for item in load_instructions(tmp_path)] == ["AGENTS.md"]


def test_no_files_means_no_instructions(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("   \n")

    assert load_instructions(tmp_path) == []


def test_a_huge_file_is_cut_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("x" * (MAX_INSTRUCTION_CHARS + 500))

    (item,) = load_instructions(tmp_path)

    assert len(item.text) < MAX_INSTRUCTION_CHARS + 200
    assert "was cut" in item.text


def test_prompt_names_workspace_date_tools_and_project_rules(tmp_path: Path) -> None:
    rules = [ProjectInstructions("AGENTS.md", "Always run make test.")]

    prompt = build_system_prompt(tmp_path, rules, ["read_file", "shell"], today=date(2026, 11, 29))

    assert f"Workspace root: {tmp_path}" in prompt
    assert "2026-11-29" in prompt
    assert "You can call: read_file, shell." in prompt
    assert "shell: builds, tests" in prompt
    assert "edit_file:" not in prompt  # advice only for tools the session has
    assert "## AGENTS.md\nAlways run make test." in prompt
    assert "Verify your work" in prompt


def test_prompt_without_instructions_has_no_project_section(tmp_path: Path) -> None:
    prompt = build_system_prompt(tmp_path, [], [])

    assert "Project instructions" not in prompt
    assert "# Tools" not in prompt
