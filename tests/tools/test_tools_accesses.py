"""The conflict table of the spec, path normalisation and combined accesses."""

from __future__ import annotations

import pytest

from tui_agent.tools import ToolAccesses, conflict, normalize_path

A = ToolAccesses

CONFLICT_TABLE = [
    ("read /a vs read /a", A.read_file("/a"), A.read_file("/a"), False),
    (
        "read vs write differing only in case",
        A.read_file("/repo/A.ts"),
        A.write_file("/repo/a.ts"),
        True,
    ),
    ("write /a vs write /b", A.write_file("/a"), A.write_file("/b"), False),
    ("write tree vs read below it", A.write_tree("/repo"), A.read_file("/repo/x/y"), True),
    (
        "read folder (not a tree) vs write below it",
        A.read_file("/repo"),
        A.write_file("/repo/x"),
        False,
    ),
    ("search tree vs read tree", A.search_tree("/repo"), A.read_tree("/repo"), False),
    ("all vs none", A.all(), A.none(), True),
    ("all vs read", A.all(), A.read_file("/a"), True),
    ("all vs all", A.all(), A.all(), True),
    ("none vs write", A.none(), A.write_file("/a"), False),
    ("none vs none", A.none(), A.none(), False),
    ("delegated vs all", A.delegated(), A.all(), False),
    ("delegated vs write", A.delegated(), A.write_file("/a"), False),
    ("delegated vs delegated", A.delegated(), A.delegated(), False),
    ("write vs write same path", A.write_file("/a"), A.write_file("/a"), True),
    ("readwrite vs read same path", A.read_write_file("/a"), A.read_file("/a"), True),
    ("search tree vs write below it", A.search_tree("/repo"), A.write_file("/repo/src/x.py"), True),
    ("read tree vs write tree beside it", A.read_tree("/repo/a"), A.write_tree("/repo/ab"), False),
    (
        "readwrite tree vs read of the tree root",
        A.read_write_tree("/repo"),
        A.read_file("/repo"),
        True,
    ),
    ("backslashes vs slashes", A.write_file("C:\\repo\\x"), A.read_file("c:/repo/x"), True),
    ("slash runs folded", A.write_file("/repo//x"), A.read_file("/repo/x"), True),
    ("trailing slash dropped", A.write_tree("/repo/"), A.read_file("/repo/y"), True),
    ("root tree contains everything", A.write_tree("/"), A.read_file("/etc/x"), True),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [case[1:] for case in CONFLICT_TABLE],
    ids=[case[0] for case in CONFLICT_TABLE],
)
def test_conflict_table(a: ToolAccesses, b: ToolAccesses, expected: bool) -> None:
    assert conflict(a, b) is expected
    assert conflict(b, a) is expected  # the relation is symmetric


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("C:\\Repo\\X.txt", "c:/repo/x.txt"),
        ("/a//b///c", "/a/b/c"),
        ("/a/b/", "/a/b"),
        ("/", "/"),
        ("//", "/"),
        ("rel/Path", "rel/path"),
    ],
)
def test_normalize_path(raw: str, normal: str) -> None:
    assert normalize_path(raw) == normal


def test_combined_accesses_conflict_when_any_pair_does() -> None:
    both = A.read_file("/a") | A.write_file("/b")
    assert conflict(both, A.read_file("/b"))
    assert not conflict(both, A.read_file("/a"))


def test_combining_with_all_gives_all_and_with_none_changes_nothing() -> None:
    assert (A.read_file("/a") | A.all()).kind == "all"
    assert A.none() | A.read_file("/a") == A.read_file("/a")
