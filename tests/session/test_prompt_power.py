"""Custom slash commands, the per-workspace prompt history and prompt attachments."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_agent.session import AppPaths
from tui_agent.session._attachments import (
    Attachment,
    attach,
    mentioned_paths,
    read_mentions,
    run_user_shell,
    split_attachments,
)
from tui_agent.session._commands import load_custom_commands
from tui_agent.session._file_index import FileIndex
from tui_agent.session._images import limits_for
from tui_agent.session._prompt_history import PromptHistory
from tui_agent.vocab import AbortSignal


@pytest.fixture
def paths(tmp_path: Path) -> AppPaths:
    return AppPaths(config_file=tmp_path / "home" / "config.toml", data_dir=tmp_path / "home")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# -- custom commands ---------------------------------------------------------------------------


def test_command_files_from_the_project_claude_and_user_folders_become_commands(
    tmp_path: Path, paths: AppPaths
) -> None:
    ws = tmp_path / "ws"
    write(ws / ".tui-agent/commands/review.md", "---\ndescription: Review a file\n---\nReview $1")
    write(ws / ".claude/commands/git/commit.md", "Write a commit message for $ARGUMENTS")
    write(ws / ".claude/commands/review.md", "the .claude copy loses")
    write(tmp_path / "home/commands/explain.md", "# Explain things\nExplain $ARGUMENTS simply.")

    commands, problems = load_custom_commands(ws, paths)

    assert problems == []
    by_name = {c.name: c for c in commands}
    assert sorted(by_name) == ["explain", "git:commit", "review"]
    assert by_name["review"].description == "Review a file"
    assert by_name["review"].expand("app.py extra") == "Review app.py"
    assert by_name["git:commit"].expand("the parser fix") == (
        "Write a commit message for the parser fix"
    )
    assert by_name["explain"].description == "Explain things"  # the first line, without #


def test_arguments_are_appended_when_the_command_names_no_placeholder(
    tmp_path: Path, paths: AppPaths
) -> None:
    write(tmp_path / "ws/.tui-agent/commands/tests.md", "Run the tests and fix failures.")
    (command,), _ = load_custom_commands(tmp_path / "ws", paths)
    assert command.expand("") == "Run the tests and fix failures."
    assert command.expand("only unit") == "Run the tests and fix failures.\n\nonly unit"


def test_a_broken_command_file_is_reported_with_its_path(tmp_path: Path, paths: AppPaths) -> None:
    bad = write(tmp_path / "ws/.tui-agent/commands/bad.md", "---\ndescription: never closed\n")
    write(tmp_path / "ws/.tui-agent/commands/empty.md", "")
    commands, problems = load_custom_commands(tmp_path / "ws", paths)
    assert commands == []
    assert {p.path.name for p in problems} == {"bad.md", "empty.md"}
    assert any(p.path == bad and "never closed" in p.message for p in problems)


# -- prompt history ----------------------------------------------------------------------------


def test_prompt_history_is_kept_per_workspace_across_sessions(
    tmp_path: Path, paths: AppPaths
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    history = PromptHistory(one, paths)
    for text in ("first", "second", "second", "third"):
        history.append(text)
    PromptHistory(two, paths).append("elsewhere")

    assert PromptHistory(one, paths).load() == ["first", "second", "third"]
    assert PromptHistory(one, paths).load(limit=2) == ["second", "third"]
    assert PromptHistory(two, paths).load() == ["elsewhere"]


def test_a_damaged_history_line_is_skipped(tmp_path: Path, paths: AppPaths) -> None:
    history = PromptHistory(tmp_path, paths)
    history.append("kept")
    with history.path.open("a") as file:
        file.write("{not json\n")
    history.append("also kept")
    assert history.load() == ["kept", "also kept"]


# -- attachments -------------------------------------------------------------------------------


def test_mentions_are_found_in_order_once_with_quotes_for_spaces() -> None:
    text = 'compare @src/a.py and @"my notes.txt", then @src/a.py again; mail me@example.com'
    assert mentioned_paths(text) == ["src/a.py", "my notes.txt"]


async def test_mentioned_files_and_folders_are_read_and_missing_ones_flagged(
    tmp_path: Path,
) -> None:
    write(tmp_path / "src/a.py", "print('a')\nprint('b')\n")
    write(tmp_path / "src/sub/b.py", "")
    text = "look at @src/a.py and @src and @nope.py and @../x"
    mentions = await read_mentions(tmp_path, text, limits_for("openai"))
    assert mentions.missing == ("nope.py", "../x")
    file, folder = mentions.attachments
    assert file.source == "@src/a.py" and "1\tprint('a')" in file.text.replace("     ", "")
    assert folder.source == "@src/" and "src/sub/b.py" in folder.text


def test_attachments_travel_after_the_words_and_split_back_for_chips() -> None:
    text = attach("fix it", [Attachment("@a.py", "1\tx"), Attachment("!make test", "FAILED")])
    assert text.startswith('fix it\n\n<context source="@a.py">\n1\tx\n</context>')
    assert split_attachments(text) == ("fix it", ["@a.py", "!make test"])
    assert split_attachments("no attachments here") == ("no attachments here", [])


async def test_a_user_shell_command_runs_in_the_workspace_and_streams(tmp_path: Path) -> None:
    seen: list[str] = []
    done = await run_user_shell(tmp_path, "pwd; echo out", AbortSignal(), seen.append)
    assert done.source == "!pwd; echo out"
    assert str(tmp_path) in done.text and "out" in done.text
    assert "out" in "".join(seen)


async def test_a_user_shell_command_can_be_stopped(tmp_path: Path) -> None:
    signal = AbortSignal()
    gate = tmp_path / "started"

    def on_output(text: str) -> None:
        if "started" in text:
            signal.abort("stopped by the user")

    done = await run_user_shell(
        tmp_path, f"echo started; touch {gate}; sleep 30", signal, on_output
    )
    assert "stopped" in done.text


# -- the file index ----------------------------------------------------------------------------


async def test_the_file_index_lists_files_and_folders_without_ignored_ones(tmp_path: Path) -> None:
    write(tmp_path / ".gitignore", "build/\n")
    write(tmp_path / "src/app/main.py", "")
    write(tmp_path / "src/app/util.py", "")
    write(tmp_path / "build/out.o", "")
    write(tmp_path / "README.md", "")
    index = FileIndex(tmp_path)
    await index.load()
    assert "src/app/main.py" in index.entries and "src/app/" in index.entries
    assert not any(entry.startswith("build") for entry in index.entries)
    assert index.match("main")[0] == "src/app/main.py"
    assert index.match("apmain") == ["src/app/main.py"]  # the letters in order
    assert index.match("app")[0] == "src/app/"  # a name starting with the query ranks first
    assert index.match("")[:2] == [".gitignore", "README.md"]


def test_the_index_narrows_from_the_last_query_as_letters_are_typed() -> None:
    index = FileIndex(Path("."))
    index.set_files([f"pkg{i}/mod{j}.py" for i in range(50) for j in range(50)])
    first = index.match("pkg4")
    narrower = index.match("pkg42")
    assert narrower[0] == "pkg42/" and all("pkg42" in e for e in narrower)
    assert len(first) == 20
