"""The file tools against a hostile disk: crashes mid-write, links swapped in after the check,
special files, file names that are not UTF-8."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from tui_agent.tools import Workspace
from tui_agent.tools import _files as files_module
from tui_agent.tools._base import ToolContext
from tui_agent.tools._edits import EditFile, EditFileArgs, WriteFile, WriteFileArgs
from tui_agent.tools._files import ReadFile, ReadFileArgs
from tui_agent.tools._results import normalize
from tui_agent.tools._search import Glob, GlobArgs, Grep, GrepArgs
from tui_agent.vocab import AbortSignal, ToolResult


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "outside").mkdir()
    return tmp_path / "ws"


def _ctx(workspace: Workspace) -> ToolContext:
    return ToolContext(AbortSignal(), lambda u: None, lambda a: None, workspace, "c1")


async def _write(workspace: Workspace, path: str, text: str) -> ToolResult:
    return await WriteFile(workspace).execute(
        WriteFileArgs(path=path, content=text), _ctx(workspace)
    )


async def _edit(workspace: Workspace, path: str, old: str, new: str) -> ToolResult:
    args = EditFileArgs(path=path, old_string=old, new_string=new)
    return await EditFile(workspace).execute(args, _ctx(workspace))


async def _read(workspace: Workspace, path: str) -> ToolResult:
    return await ReadFile(workspace).execute(ReadFileArgs(path=path), _ctx(workspace))


# --- atomic writes ------------------------------------------------------------------------------


async def test_a_crash_before_the_rename_leaves_the_old_content_and_no_temp_file(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "big.txt").write_text("head\n" + "old content\n" * 1000)

    def dies(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(files_module.os, "fsync", dies)
    with pytest.raises(OSError, match="Input/output error"):
        await _edit(Workspace(root), "big.txt", "head", "HEAD")

    assert (root / "big.txt").read_text() == "head\n" + "old content\n" * 1000
    assert sorted(os.listdir(root)) == ["big.txt"]


async def test_writes_keep_the_permission_bits(root: Path) -> None:
    script = root / "run.sh"
    script.write_text("echo one\n")
    script.chmod(0o751)
    workspace = Workspace(root)

    await _edit(workspace, "run.sh", "one", "two")
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    await _write(workspace, "run.sh", "echo three\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert script.read_text() == "echo three\n"


async def test_a_new_file_gets_the_default_permissions(root: Path) -> None:
    umask = os.umask(0o022)
    os.umask(umask)

    await _write(Workspace(root), "new/file.txt", "x")

    assert stat.S_IMODE((root / "new/file.txt").stat().st_mode) == 0o666 & ~umask


async def test_writing_through_a_link_inside_replaces_the_target_and_keeps_the_link(
    root: Path,
) -> None:
    (root / "real.txt").write_text("before\n")
    (root / "alias.txt").symlink_to("real.txt")

    result = await _edit(Workspace(root), "alias.txt", "before", "after")

    assert not result.is_error
    assert (root / "real.txt").read_text() == "after\n"
    assert (root / "alias.txt").is_symlink()


# --- confinement under races --------------------------------------------------------------------


class _RacingWorkspace(Workspace):
    """Checks a path, then (as another process would) swaps `sub` for a link to the outside
    before the tool opens anything."""

    def __init__(self, root: Path, outside: Path) -> None:
        super().__init__(root)
        self.outside = outside

    def resolve(self, path: str, *, write: bool = False) -> Path:
        real = super().resolve(path, write=write)
        sub = self.root / "sub"
        if sub.is_dir() and not sub.is_symlink():
            for child in sub.iterdir():
                child.unlink()
            sub.rmdir()
            sub.symlink_to(self.outside)
        return real


@pytest.mark.parametrize("tool", ["write", "edit", "read"])
async def test_a_folder_swapped_for_a_link_after_the_check_is_never_followed(
    root: Path, tool: str
) -> None:
    outside = root.parent / "outside"
    (outside / "f.txt").write_text("secret old\n")
    (root / "sub").mkdir()
    (root / "sub" / "f.txt").write_text("inside old\n")
    workspace = _RacingWorkspace(root, outside)

    if tool == "write":
        result = await _write(workspace, "sub/f.txt", "escaped\n")
    elif tool == "edit":
        result = await _edit(workspace, "sub/f.txt", "old", "escaped")
    else:
        result = await _read(workspace, "sub/f.txt")

    assert result.is_error
    assert "changed while it was being opened" in str(result.output)
    assert (outside / "f.txt").read_text() == "secret old\n"
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]


async def test_writes_never_land_outside_while_a_folder_flips_to_a_link(root: Path) -> None:
    outside = root.parent / "outside"
    (root / "sub").mkdir()
    workspace = Workspace(root)
    stop = threading.Event()

    def flip() -> None:  # the attacker: swaps the folder for a link to outside, and back
        sub, hidden = root / "sub", root / "hidden"
        while not stop.is_set():
            try:
                os.rename(sub, hidden)
                os.symlink(outside, sub)
                os.unlink(sub)
                os.rename(hidden, sub)
            except OSError:
                pass

    racer = threading.Thread(target=flip)
    racer.start()
    try:
        for n in range(200):
            try:
                await _write(workspace, f"sub/f{n}.txt", "x")
            except OSError:
                pass  # the folder was away at that moment
    finally:
        stop.set()
        racer.join()

    assert list(outside.iterdir()) == []


# --- special files ------------------------------------------------------------------------------


async def test_read_file_refuses_a_fifo_without_blocking(root: Path) -> None:
    os.mkfifo(root / "pipe")

    result = await _read(Workspace(root), "pipe")

    assert result.is_error
    assert str(result.output) == "pipe is a FIFO (named pipe), not a regular file; refused."


async def test_walks_skip_special_files(root: Path) -> None:
    os.mkfifo(root / "pipe")
    (root / "a.txt").write_text("needle\n")
    workspace = Workspace(root)

    listed = await Glob(workspace).execute(GlobArgs(pattern="*"), _ctx(workspace))
    found = await Grep(workspace).execute(GrepArgs(pattern="needle"), _ctx(workspace))

    assert listed.output == "a.txt"
    assert found.output == "a.txt:1:needle"


# --- names that are not UTF-8 -------------------------------------------------------------------


async def test_names_that_are_not_utf8_are_listed_escaped(root: Path) -> None:
    (root / "dir\udcff").mkdir()  # the bytes b"dir\xff", as Python names them
    (root / "dir\udcff" / "caf\udce9.txt").write_bytes(b"needle\n")
    workspace = Workspace(root)

    listed = await Glob(workspace).execute(GlobArgs(pattern="**/*.txt"), _ctx(workspace))
    found = await Grep(workspace).execute(GrepArgs(pattern="needle"), _ctx(workspace))

    assert listed.output == "dir\\xff/caf\\xe9.txt"
    assert found.output == "dir\\xff/caf\\xe9.txt:1:needle"
    str(listed.output).encode("utf-8")  # a request carrying it can be encoded
    str(found.output).encode("utf-8")


def test_any_tool_output_that_utf8_cannot_encode_is_escaped() -> None:
    assert normalize(ToolResult(output="caf\udce9.txt")).output == "caf\\xe9.txt"
    assert normalize(ToolResult(output="half \ud800 pair")).output == "half \\ud800 pair"
    fine = ToolResult(output="café")
    assert normalize(fine) is fine
