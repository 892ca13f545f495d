"""Workspace confinement: paths that leave the root are refused, paths inside are resolved."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tui_agent.tools import Workspace, WorkspaceError


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Workspace, Path]:
    """ws/ (the workspace) beside outside/ and ws-evil/ (a sibling sharing the root's prefix)."""
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    (root / "src" / "pkg").mkdir(parents=True)
    outside.mkdir()
    (tmp_path / "ws-evil").mkdir()
    (outside / "secret.txt").write_text("secret")
    (root / "src" / "main.py").write_text("print()")
    os.symlink(outside, root / "link_out")  # a folder link leaving the root
    os.symlink(outside / "secret.txt", root / "secret_link")  # a file link leaving the root
    os.symlink("/etc/passwd", root / "passwd_link")
    os.symlink(tmp_path, root / "parent_link")
    os.symlink(root / "link_out", root / "chain_link")  # a link to a link that leaves
    os.symlink(outside / "missing.txt", root / "dangling_out")  # writing through it would escape
    os.symlink("../../outside", root / "src" / "relative_out")
    os.symlink(root / "src", root / "src_link")  # stays inside: allowed
    os.symlink("loop_b", root / "loop_a")
    os.symlink("loop_a", root / "loop_b")
    return Workspace(root), tmp_path


ATTACKS = [
    "..",
    "../",
    "../outside/secret.txt",
    "../../etc/passwd",
    "./../outside",
    "src/../../outside",
    "src/pkg/../../../outside/secret.txt",
    "a/b/c/../../../../x",
    "..//..//etc/passwd",
    "../ws-evil/x",
    "/etc/passwd",
    "/",
    "/tmp",
    "//etc/passwd",
    "/../etc/passwd",
    "/proc/self/root/etc/passwd",
    "/proc/self/environ",
    "/dev/null",
    "~",
    "~/.ssh/id_rsa",
    "~root/.bashrc",
    "~/../../etc/passwd",
    "src/\x00/../../etc/passwd",
    "a.txt\x00.png",
    "link_out",
    "link_out/secret.txt",
    "secret_link",
    "passwd_link",
    "parent_link/outside/secret.txt",
    "parent_link",
    "chain_link/secret.txt",
    "dangling_out",
    "src/relative_out/secret.txt",
    "src_link/../../outside",
    "parent_link/ws-evil/x",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_paths_leaving_the_workspace_are_refused(
    layout: tuple[Workspace, Path], attack: str
) -> None:
    workspace, _ = layout
    with pytest.raises(WorkspaceError):
        workspace.resolve(attack)
    with pytest.raises(WorkspaceError):
        workspace.resolve(attack, write=True)


def test_there_are_at_least_thirty_attacks() -> None:
    assert len(set(ATTACKS)) >= 30


def test_absolute_paths_outside_name_the_workspace_in_the_error(
    layout: tuple[Workspace, Path],
) -> None:
    workspace, _ = layout
    with pytest.raises(WorkspaceError, match="outside the workspace") as caught:
        workspace.resolve("/etc/passwd")
    assert str(workspace.root) in str(caught.value)


def test_a_tilde_is_refused_with_a_hint_instead_of_expanded(layout: tuple[Workspace, Path]) -> None:
    workspace, _ = layout
    with pytest.raises(WorkspaceError, match="not expanded"):
        workspace.resolve("~/notes.txt")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/main.py", "src/main.py"),
        ("./src/main.py", "src/main.py"),
        ("src/pkg/../main.py", "src/main.py"),
        ("src_link/main.py", "src/main.py"),
        ("new/file.txt", "new/file.txt"),
        (".", "."),
        ("", "."),
    ],
)
def test_paths_inside_resolve_to_their_real_place(
    layout: tuple[Workspace, Path], path: str, expected: str
) -> None:
    workspace, _ = layout
    assert workspace.display(workspace.resolve(path)) == expected


def test_an_absolute_path_inside_the_root_is_accepted(layout: tuple[Workspace, Path]) -> None:
    workspace, _ = layout
    inside = str(workspace.root / "src" / "main.py")
    assert workspace.resolve(inside) == workspace.root / "src" / "main.py"


def test_a_link_loop_stays_inside_and_fails_only_when_opened(
    layout: tuple[Workspace, Path],
) -> None:
    workspace, _ = layout
    resolved = workspace.resolve("loop_a")
    assert workspace.contains(resolved)


def test_an_extra_root_is_readable_but_not_writable(tmp_path: Path) -> None:
    root, spill = tmp_path / "ws", tmp_path / "spill"
    root.mkdir()
    spill.mkdir()
    (spill / "out.txt").write_text("x")
    workspace = Workspace(root, readable=[spill])
    assert workspace.resolve(str(spill / "out.txt")) == spill / "out.txt"
    with pytest.raises(WorkspaceError, match="readable only"):
        workspace.resolve(str(spill / "out.txt"), write=True)
    assert workspace.display(spill / "out.txt") == str(spill / "out.txt")


def test_a_workspace_given_through_a_link_is_its_real_folder(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "alias")
    workspace = Workspace(tmp_path / "alias")
    assert workspace.root == real
    assert workspace.resolve("x") == real / "x"
