"""read_file, write_file and edit_file against a real temporary workspace."""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tui_agent.tools import (
    EditFile,
    ReadFile,
    ToolContext,
    Workspace,
    WriteFile,
)
from tui_agent.tools import (
    _files as files_module,
)
from tui_agent.tools._edits import EditFileArgs, WriteFileArgs
from tui_agent.tools._files import ReadFileArgs
from tui_agent.vocab import AbortSignal, ToolResult


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "ws").mkdir()
    (tmp_path / "spill").mkdir()
    return Workspace(tmp_path / "ws", readable=[tmp_path / "spill"])


def context(workspace: Workspace) -> ToolContext:
    return ToolContext(AbortSignal(), lambda u: None, lambda a: None, workspace, "c1")


def put(workspace: Workspace, name: str, data: str | bytes) -> Path:
    path = workspace.root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_bytes(data.encode())
    return path


def content(path: Path) -> bytes:
    return path.read_bytes()


async def read(workspace: Workspace, path: str, **kw: int) -> ToolResult:
    return await ReadFile(workspace).execute(ReadFileArgs(path=path, **kw), context(workspace))


async def write(workspace: Workspace, path: str, text: str) -> ToolResult:
    args = WriteFileArgs(path=path, content=text)
    return await WriteFile(workspace).execute(args, context(workspace))


async def edit(
    workspace: Workspace, path: str, old: str, new: str, all: bool = False
) -> ToolResult:
    args = EditFileArgs(path=path, old_string=old, new_string=new, replace_all=all)
    return await EditFile(workspace).execute(args, context(workspace))


# --- read_file ---------------------------------------------------------------------------------


async def test_read_numbers_lines_like_cat_n(workspace: Workspace) -> None:
    put(workspace, "a.txt", "first\nsecond\n")
    result = await read(workspace, "a.txt")
    assert result.text == "     1\tfirst\n     2\tsecond"
    assert not result.is_error


async def test_offset_and_limit_select_lines_and_say_how_to_read_on(workspace: Workspace) -> None:
    put(workspace, "a.txt", "".join(f"line {i}\n" for i in range(1, 11)))
    result = await read(workspace, "a.txt", offset=3, limit=2)
    lines = result.text.splitlines()
    assert lines[:2] == ["     3\tline 3", "     4\tline 4"]
    assert "Read more with offset=5" in result.text


async def test_a_long_file_shows_two_thousand_lines_by_default(workspace: Workspace) -> None:
    put(workspace, "long.txt", "".join(f"{i}\n" for i in range(1, 3001)))
    result = await read(workspace, "long.txt")
    assert "  2000\t2000" in result.text
    assert "  2001\t" not in result.text
    assert "offset=2001" in result.text


async def test_a_huge_read_is_paged_to_stay_small(workspace: Workspace) -> None:
    put(workspace, "wide.txt", ("x" * 1_000 + "\n") * 1_000)
    result = await read(workspace, "wide.txt")
    assert len(result.text) < 50_000
    assert "Read more with offset=" in result.text


async def test_overlong_lines_are_cut(workspace: Workspace) -> None:
    put(workspace, "one.txt", "y" * 10_000 + "\nnext\n")
    result = await read(workspace, "one.txt")
    first, second = result.text.splitlines()
    assert first.endswith("... [line cut at 2000 characters]")
    assert first.count("y") == 2_000
    assert second == "     2\tnext"


async def test_binary_files_are_refused(workspace: Workspace) -> None:
    put(workspace, "image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    result = await read(workspace, "image.png")
    assert result.is_error
    assert "binary file" in result.text


async def test_a_utf8_bom_is_dropped_and_bad_bytes_replaced(workspace: Workspace) -> None:
    put(workspace, "bom.txt", b"\xef\xbb\xbfhello \xff world\n")
    result = await read(workspace, "bom.txt")
    assert result.text == "     1\thello \ufffd world"


async def test_utf16_with_a_bom_is_decoded(workspace: Workspace) -> None:
    put(workspace, "wide.txt", "héllo\nwörld\n".encode("utf-16"))
    result = await read(workspace, "wide.txt")
    assert result.text == "     1\théllo\n     2\twörld"


async def test_an_empty_file_says_so(workspace: Workspace) -> None:
    put(workspace, "empty.txt", "")
    result = await read(workspace, "empty.txt")
    assert result.text == "empty.txt is empty."
    assert not result.is_error


async def test_an_offset_past_the_end_is_a_clear_error(workspace: Workspace) -> None:
    put(workspace, "a.txt", "one\ntwo\n")
    result = await read(workspace, "a.txt", offset=9)
    assert result.is_error
    assert result.text == "a.txt has 2 lines; offset 9 is past the end of the file."


async def test_missing_files_and_folders_are_clear_errors(workspace: Workspace) -> None:
    (workspace.root / "folder").mkdir()
    missing = await read(workspace, "nope.txt")
    folder = await read(workspace, "folder")
    assert missing.is_error and missing.text == "File not found: nope.txt"
    assert folder.is_error and "is a directory" in folder.text


async def test_reading_outside_the_workspace_is_refused(workspace: Workspace) -> None:
    result = await read(workspace, "../spill/../../etc/passwd")
    assert result.is_error
    assert "outside the workspace" in result.text


async def test_the_spill_folder_can_be_read(workspace: Workspace) -> None:
    spill_file = workspace.readable_roots[0] / "shell-c1-x.txt"
    spill_file.write_text("saved output\n")
    result = await read(workspace, str(spill_file))
    assert result.text == "     1\tsaved output"


# --- write_file --------------------------------------------------------------------------------


async def test_write_creates_parent_folders_and_reports_a_diff(workspace: Workspace) -> None:
    result = await write(workspace, "deep/down/new.txt", "hello\n")
    assert content(workspace.root / "deep/down/new.txt") == b"hello\n"
    assert result.text.startswith("Created deep/down/new.txt")
    assert result.display is not None
    assert result.display["path"] == "deep/down/new.txt"
    assert "+hello\n" in result.display["diff"]


async def test_write_replaces_an_existing_file_and_diffs_against_it(workspace: Workspace) -> None:
    put(workspace, "a.txt", "old\n")
    result = await write(workspace, "a.txt", "new\n")
    assert content(workspace.root / "a.txt") == b"new\n"
    assert result.text.startswith("Updated a.txt")
    assert result.display is not None
    assert "-old\n+new\n" in result.display["diff"]


async def test_write_keeps_the_line_endings_it_was_given(workspace: Workspace) -> None:
    await write(workspace, "crlf.txt", "a\r\nb\r\n")
    assert content(workspace.root / "crlf.txt") == b"a\r\nb\r\n"


async def test_write_to_a_folder_is_refused(workspace: Workspace) -> None:
    (workspace.root / "folder").mkdir()
    result = await write(workspace, "folder", "x")
    assert result.is_error and "is a directory" in result.text


async def test_write_outside_and_into_the_spill_folder_is_refused(workspace: Workspace) -> None:
    outside = await write(workspace, "../escape.txt", "x")
    spill = await write(workspace, str(workspace.readable_roots[0] / "x.txt"), "x")
    assert outside.is_error and "outside the workspace" in outside.text
    assert spill.is_error and "readable only" in spill.text
    assert not (workspace.root.parent / "escape.txt").exists()


# --- edit_file ---------------------------------------------------------------------------------


async def test_edit_replaces_one_exact_match_and_shows_the_diff(workspace: Workspace) -> None:
    put(workspace, "m.py", "def f():\n    return 1\n")
    result = await edit(workspace, "m.py", "return 1", "return 2")
    assert content(workspace.root / "m.py") == b"def f():\n    return 2\n"
    assert result.text == "Edited m.py: 1 replacement."
    assert result.display is not None
    assert result.display["path"] == "m.py"
    assert "-    return 1\n+    return 2\n" in result.display["diff"]


async def test_edit_with_no_match_says_what_to_do(workspace: Workspace) -> None:
    put(workspace, "m.py", "x = 1\n")
    result = await edit(workspace, "m.py", "y = 1", "y = 2")
    assert result.is_error
    assert "not found in m.py" in result.text and "read_file" in result.text
    assert content(workspace.root / "m.py") == b"x = 1\n"


async def test_edit_with_several_matches_asks_for_context_or_replace_all(
    workspace: Workspace,
) -> None:
    put(workspace, "m.py", "a\na\na\n")
    result = await edit(workspace, "m.py", "a", "b")
    assert result.is_error
    assert "occurs 3 times" in result.text and "replace_all" in result.text
    assert content(workspace.root / "m.py") == b"a\na\na\n"


async def test_replace_all_changes_every_occurrence(workspace: Workspace) -> None:
    put(workspace, "m.py", "a\na\na\n")
    result = await edit(workspace, "m.py", "a", "b", all=True)
    assert content(workspace.root / "m.py") == b"b\nb\nb\n"
    assert result.text == "Edited m.py: 3 replacements."


async def test_edit_refuses_identical_or_empty_strings(workspace: Workspace) -> None:
    put(workspace, "m.py", "a\n")
    same = await edit(workspace, "m.py", "a", "a")
    empty = await edit(workspace, "m.py", "", "b")
    assert same.is_error and "the same" in same.text
    assert empty.is_error and "write_file" in empty.text


async def test_edit_matches_lf_text_in_a_crlf_file_and_keeps_crlf(workspace: Workspace) -> None:
    put(workspace, "win.txt", b"one\r\ntwo\r\nthree\r\n")
    result = await edit(workspace, "win.txt", "one\ntwo", "uno\ndos")
    assert not result.is_error
    assert content(workspace.root / "win.txt") == b"uno\r\ndos\r\nthree\r\n"


async def test_edit_keeps_a_utf8_bom(workspace: Workspace) -> None:
    put(workspace, "bom.txt", b"\xef\xbb\xbfkey = 1\n")
    await edit(workspace, "bom.txt", "1", "2")
    assert content(workspace.root / "bom.txt") == b"\xef\xbb\xbfkey = 2\n"


async def test_edit_refuses_files_that_are_not_utf8(workspace: Workspace) -> None:
    put(workspace, "latin1.txt", "café\n".encode("latin-1"))
    result = await edit(workspace, "latin1.txt", "caf", "CAF")
    assert result.is_error and "not UTF-8" in result.text
    assert content(workspace.root / "latin1.txt") == "café\n".encode("latin-1")


async def test_edit_of_a_missing_file_is_a_clear_error(workspace: Workspace) -> None:
    result = await edit(workspace, "ghost.py", "a", "b")
    assert result.is_error and result.text == "File not found: ghost.py"


# --- paging, against a plain reference ----------------------------------------------------------


def reference_window(text: str, offset: int, limit: int) -> list[str]:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return [f"{n:>6}\t{line}" for n, line in enumerate(lines, 1)][offset - 1 : offset - 1 + limit]


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.text(alphabet="ab \t", max_size=6), min_size=1, max_size=30),
    trailing_newline=st.booleans(),
    offset=st.integers(min_value=1, max_value=35),
    limit=st.integers(min_value=1, max_value=10),
    chunk=st.integers(min_value=1, max_value=16),
)
def test_paging_matches_a_plain_split_for_any_chunk_size(
    tmp_path_factory: pytest.TempPathFactory,
    lines: list[str],
    trailing_newline: bool,
    offset: int,
    limit: int,
    chunk: int,
) -> None:
    text = "\n".join(lines) + ("\n" if trailing_newline else "")
    assume(text)  # an empty file has its own message
    path = tmp_path_factory.mktemp("paging") / "f.txt"
    path.write_text(text)
    workspace = Workspace(path.parent)
    expected = reference_window(text, offset, limit)
    with patch.object(files_module, "_CHUNK", chunk):
        if not expected:
            with pytest.raises(files_module._Refused, match="past the end"):
                files_module._read_window(workspace, path, "f.txt", offset, limit)
            return
        shown = files_module._read_window(workspace, path, "f.txt", offset, limit)
    assert shown.split("\n\n[Showing")[0].split("\n") == expected


async def test_the_proposed_change_is_the_whole_file_before_and_after_and_writes_nothing(
    workspace: Workspace,
) -> None:
    path = put(workspace, "a.txt", "one\ntwo\n")
    edit = EditFileArgs(path="a.txt", old_string="two", new_string="three")
    change = await EditFile(workspace).proposed_change(edit)
    assert change is not None and change.path == str(path)
    assert (change.before, change.after) == ("one\ntwo\n", "one\nthree\n")
    fresh = await WriteFile(workspace).proposed_change(WriteFileArgs(path="b.txt", content="new"))
    assert fresh is not None and (fresh.before, fresh.after) == (None, "new")
    missing = EditFileArgs(path="a.txt", old_string="absent", new_string="x")
    assert await EditFile(workspace).proposed_change(missing) is None
    assert path.read_text() == "one\ntwo\n" and not (workspace.root / "b.txt").exists()
