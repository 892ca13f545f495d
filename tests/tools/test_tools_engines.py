"""ripgrep and our own walker answer alike: glob, grep and the @ file index give the same
results on the same tree, ignore rules included (.gitignore at several depths with negation,
.ignore, .git/info/exclude, hidden files, .git itself)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.test_tools_search import glob, grep, tree
from tui_agent.session._file_index import FileIndex
from tui_agent.tools import Workspace, rg_path

FILES: dict[str, str | bytes] = {
    ".gitignore": "build/\n*.log\n!keep.log\n/top-only.txt\n",
    ".ignore": "scratch/\n",
    ".git/info/exclude": "private*\n",
    ".git/HEAD": "ref: refs/heads/main\n",
    ".hidden/config.py": "needle = 1\n",
    "top-only.txt": "needle\n",
    "src/top-only.txt": "needle in src\n",
    "src/main.py": "needle = 'main'\n",
    "src/app.log": "needle in a log\n",
    "src/keep.log": "needle kept\n",
    "src/web/.gitignore": "*.tmp\n!important.tmp\n",
    "src/web/page.tmp": "needle tmp\n",
    "src/web/important.tmp": "needle important\n",
    "src/web/deep/index.ts": "export const needle = 2;\n",
    "build/out.js": "needle built\n",
    "scratch/notes.md": "needle scratch\n",
    "private-notes.txt": "needle private\n",
    "docs/guide.md": "# Needle\nneedle here\n",
}

pytestmark = pytest.mark.skipif(rg_path() is None, reason="the ripgrep package is a dependency")


@pytest.fixture
def project(tmp_path: Path) -> Workspace:
    return tree(tmp_path / "ws", FILES)


def without_rg(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tui_agent.tools._search.rg_path", lambda: None)
    monkeypatch.setattr("tui_agent.session._file_index.rg_path", lambda: None)


@pytest.mark.parametrize(
    ("pattern", "path"), [("**/*", None), ("**/*.py", None), ("*.tmp", "src/web"), ("*", None)]
)
async def test_glob_lists_the_same_files_with_and_without_ripgrep(
    project: Workspace, monkeypatch: pytest.MonkeyPatch, pattern: str, path: str | None
) -> None:
    with_rg = (await glob(project, pattern, path)).text
    without_rg(monkeypatch)
    assert (await glob(project, pattern, path)).text == with_rg


async def test_the_listing_obeys_every_ignore_file(project: Workspace) -> None:
    listed = set((await glob(project, "**/*")).text.splitlines())
    assert listed == {
        ".gitignore",
        ".ignore",
        ".hidden/config.py",
        "src/top-only.txt",
        "src/main.py",
        "src/keep.log",
        "src/web/.gitignore",
        "src/web/important.tmp",
        "src/web/deep/index.ts",
        "docs/guide.md",
    }


@pytest.mark.parametrize("pattern", ["needle", "need(le|LE)", "^needle"])
async def test_grep_finds_the_same_lines_with_and_without_ripgrep(
    project: Workspace, monkeypatch: pytest.MonkeyPatch, pattern: str
) -> None:
    with_rg = (await grep(project, pattern)).text
    without_rg(monkeypatch)
    assert (await grep(project, pattern)).text == with_rg
    assert "src/keep.log" in with_rg and "build/" not in with_rg and "private" not in with_rg


async def test_the_file_index_is_the_same_with_and_without_ripgrep(
    project: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = FileIndex(project.root)
    await index.load()
    without_rg(monkeypatch)
    fallback = FileIndex(project.root)
    await fallback.load()
    assert index.entries == fallback.entries
    assert "src/web/deep/" in index.entries and "scratch/" not in index.entries
