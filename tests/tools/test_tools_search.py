"""glob and grep: patterns, .gitignore (nested, negated, anchored), sorting and bounds."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tui_agent.tools import Glob, Grep, ToolContext, Workspace
from tui_agent.tools._search import MAX_GLOB_RESULTS, MAX_GREP_MATCHES, GlobArgs, GrepArgs
from tui_agent.tools._walk import IgnoreFile, glob_regex, walk_order
from tui_agent.vocab import AbortSignal, ToolResult


def tree(root: Path, files: dict[str, str | bytes]) -> Workspace:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return Workspace(root)


def context(workspace: Workspace) -> ToolContext:
    return ToolContext(AbortSignal(), lambda u: None, lambda a: None, workspace, "c1")


async def glob(workspace: Workspace, pattern: str, path: str | None = None) -> ToolResult:
    args = GlobArgs(pattern=pattern, path=path)
    return await Glob(workspace).execute(args, context(workspace))


async def grep(workspace: Workspace, pattern: str, **kw: object) -> ToolResult:
    args = GrepArgs.model_validate({"pattern": pattern, **kw})
    return await Grep(workspace).execute(args, context(workspace))


PROJECT: dict[str, str | bytes] = {
    ".gitignore": "*.log\n/build/\nnode_modules/\n!keep.log\n",
    "README.md": "hello project\n",
    "app.log": "ignored log TODO\n",
    "keep.log": "kept log TODO\n",
    "build/out.js": "TODO in build\n",
    "src/build/gen.py": "# TODO nested build is not anchored away\n",
    "node_modules/lib/index.js": "TODO dependency\n",
    "src/main.py": "import os\n# TODO: main\nprint('Todo')\n",
    "src/util.py": "def helper():\n    return 1  # todo later\n",
    "src/web/.gitignore": "*.tmp\n!important.tmp\n",
    "src/web/page.ts": "// TODO page\n",
    "src/web/cache.tmp": "TODO cache\n",
    "src/web/important.tmp": "TODO important\n",
    "src/assets/logo.png": b"\x89PNG\x00\x00TODO",
    ".git/config": "TODO git internals\n",
    "docs/a-b.md": "TODO dash\n",
    "docs/a/b.md": "TODO slash\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Workspace:
    return tree(tmp_path / "ws", PROJECT)


# --- glob --------------------------------------------------------------------------------------


async def test_glob_lists_files_sorted_and_respects_gitignore(project: Workspace) -> None:
    result = await glob(project, "**/*")
    listed = result.text.splitlines()
    assert listed == sorted(listed, key=lambda p: p.split("/"))
    assert "src/main.py" in listed and "keep.log" in listed
    assert "src/web/important.tmp" in listed  # re-included by the nested .gitignore
    assert "src/build/gen.py" in listed  # "/build/" is anchored to the root
    for hidden in ("app.log", "build/out.js", "node_modules/lib/index.js"):
        assert hidden not in listed
    assert "src/web/cache.tmp" not in listed
    assert not any(p.startswith(".git/") for p in listed)


async def test_a_pattern_without_slashes_matches_at_the_top_only_and_hints(
    project: Workspace,
) -> None:
    top = await glob(project, "*.py")
    assert top.text.startswith('No files match "*.py" in the workspace')
    assert '"**/"' in top.text
    deep = await glob(project, "**/*.py")
    assert deep.text.splitlines() == ["src/build/gen.py", "src/main.py", "src/util.py"]


async def test_glob_understands_braces_and_a_starting_folder(project: Workspace) -> None:
    result = await glob(project, "**/*.{ts,tmp}", path="src/web")
    assert result.text.splitlines() == ["src/web/important.tmp", "src/web/page.ts"]


async def test_glob_output_is_bounded_with_a_count_of_the_rest(tmp_path: Path) -> None:
    count = MAX_GLOB_RESULTS + 7
    workspace = tree(tmp_path, {f"f{i:04}.txt": "" for i in range(count)})
    lines = (await glob(workspace, "*.txt")).text.splitlines()
    assert len(lines) == MAX_GLOB_RESULTS + 1
    assert lines[-1].startswith("[7 more files not shown")


async def test_glob_outside_the_workspace_is_refused(project: Workspace) -> None:
    result = await glob(project, "*", path="..")
    assert result.is_error and "outside the workspace" in result.text


async def test_links_leaving_the_workspace_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TODO secret\n")
    workspace = tree(tmp_path / "ws", {"a.txt": "TODO a\n"})
    os.symlink(outside, workspace.root / "dir_link")
    os.symlink(outside / "secret.txt", workspace.root / "file_link.txt")
    assert (await glob(workspace, "**/*")).text.splitlines() == ["a.txt"]
    assert (await grep(workspace, "TODO")).text == "a.txt:1:TODO a"


# --- grep --------------------------------------------------------------------------------------


async def test_grep_prints_sorted_path_line_text_and_skips_ignored_and_binary(
    project: Workspace,
) -> None:
    result = await grep(project, "TODO")
    assert result.text.splitlines() == [
        "docs/a/b.md:1:TODO slash",
        "docs/a-b.md:1:TODO dash",
        "keep.log:1:kept log TODO",
        "src/build/gen.py:1:# TODO nested build is not anchored away",
        "src/main.py:2:# TODO: main",
        "src/web/important.tmp:1:TODO important",
        "src/web/page.ts:1:// TODO page",
    ]


async def test_grep_ignore_case(project: Workspace) -> None:
    result = await grep(project, "todo", path="src", ignore_case=True, glob="*.py")
    assert result.text.splitlines() == [
        "src/build/gen.py:1:# TODO nested build is not anchored away",
        "src/main.py:2:# TODO: main",
        "src/main.py:3:print('Todo')",
        "src/util.py:2:    return 1  # todo later",
    ]


async def test_grep_glob_with_a_slash_matches_the_path(project: Workspace) -> None:
    result = await grep(project, "TODO", glob="src/web/*")
    assert [line.split(":")[0] for line in result.text.splitlines()] == [
        "src/web/important.tmp",
        "src/web/page.ts",
    ]


async def test_grep_line_anchors_work_per_line(project: Workspace) -> None:
    result = await grep(project, r"^print\(", path="src")
    assert result.text == "src/main.py:3:print('Todo')"


async def test_grep_can_search_one_file(project: Workspace) -> None:
    result = await grep(project, "def", path="src/util.py")
    assert result.text == "src/util.py:1:def helper():"


async def test_grep_with_no_match_says_so(project: Workspace) -> None:
    assert (await grep(project, "nothing-like-this")).text == 'No matches for "nothing-like-this".'


async def test_an_invalid_regex_is_a_clear_error(project: Workspace) -> None:
    result = await grep(project, "(unclosed")
    assert result.is_error and result.text.startswith("Invalid regular expression")


async def test_grep_output_is_bounded_with_a_count_of_the_rest(tmp_path: Path) -> None:
    lines = "".join(f"match {i}\n" for i in range(MAX_GREP_MATCHES + 30))
    workspace = tree(tmp_path, {"a.txt": lines, "b.txt": "match b\n"})
    text = (await grep(workspace, "match")).text.splitlines()
    assert len(text) == MAX_GREP_MATCHES + 1
    assert text[-1].startswith("[31 more matches not shown (281 in 2 files)")


async def test_a_missing_search_path_is_a_clear_error(project: Workspace) -> None:
    result = await grep(project, "x", path="nowhere")
    assert result.is_error and "not found" in result.text


# --- patterns ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "a.py", True),
        ("*.py", "d/a.py", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "d/e/a.py", True),
        ("src/**", "src/a/b", True),
        ("src/**/x", "src/x", True),
        ("a?c", "abc", True),
        ("a?c", "a/c", False),
        ("[ab].txt", "b.txt", True),
        ("[!ab].txt", "b.txt", False),
        ("*.{js,ts}", "x.ts", True),
        ("a\\*", "a*", True),
        ("a\\*", "ab", False),
    ],
)
def test_glob_patterns(pattern: str, path: str, matches: bool) -> None:
    assert bool(re.fullmatch(glob_regex(pattern), path)) is matches


def test_walk_order_sorts_folder_by_folder() -> None:
    paths = ["a-b.txt", "a/z.txt", "a.txt", "a/b/c.txt", "a b/x", "a/-.txt", "ab", "a/\udce9"]

    assert sorted(paths, key=walk_order) == sorted(paths, key=lambda p: p.split("/"))
    assert sorted(paths, key=walk_order)[:4] == ["a/-.txt", "a/b/c.txt", "a/z.txt", "a/\udce9"]


@pytest.mark.parametrize(
    ("rules", "path", "is_dir", "ignored"),
    [
        ("*.log", "deep/x.log", False, True),
        ("*.log\n!keep.log", "keep.log", False, False),
        ("/build", "build", True, True),
        ("/build", "src/build", True, None),
        ("build/", "build", False, None),
        ("build/", "src/build", True, True),
        ("doc/*.txt", "doc/a.txt", False, True),
        ("doc/*.txt", "x/doc/a.txt", False, None),
        ("**/cache", "a/b/cache", True, True),
        ("# comment\n\n", "comment", False, None),
        ("\\#hash", "#hash", False, True),
        ("trailing   ", "trailing", False, True),
    ],
)
def test_gitignore_rules(rules: str, path: str, is_dir: bool, ignored: bool | None) -> None:
    assert IgnoreFile.parse(rules, "").verdict(path, is_dir) is ignored


def test_a_nested_gitignore_speaks_only_below_its_folder() -> None:
    nested = IgnoreFile.parse("*.tmp", "src/web")
    assert nested.verdict("src/web/a.tmp", False) is True
    assert nested.verdict("src/a.tmp", False) is None


async def test_an_absolute_pattern_inside_the_workspace_is_understood(project: Workspace) -> None:
    result = await glob(project, f"{project.root}/src/*.py")
    assert result.text.splitlines() == ["src/main.py", "src/util.py"]


async def test_readable_extra_folders_are_not_walked(tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    spill.mkdir()
    (spill / "out.txt").write_text("needle\n")
    (tmp_path / "ws").mkdir()
    workspace = Workspace(tmp_path / "ws", readable=[spill])
    folder = await grep(workspace, "needle", path=str(spill))
    one_file = await grep(workspace, "needle", path=str(spill / "out.txt"))
    assert folder.is_error and "Only the workspace can be searched" in folder.text
    assert one_file.text == f"{spill / 'out.txt'}:1:needle"
