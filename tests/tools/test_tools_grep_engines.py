"""grep's two engines: ripgrep and the Python fallback give the same answers on the same tree,
and neither can freeze the app with a pattern that backtracks for ever."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from dataclasses import asdict
from pathlib import Path

import pytest

from tests.tools.test_tools_search import PROJECT, tree
from tui_agent.tools import Grep, ToolContext, Workspace, _groups
from tui_agent.tools import _rg as rg_module
from tui_agent.tools import _search as search_module
from tui_agent.tools._base import ToolAborted
from tui_agent.tools._pygrep import MAX_GREP_MATCHES, WORKER, Query
from tui_agent.tools._rg import rg_path
from tui_agent.tools._search import GrepArgs, _FirstFiles
from tui_agent.vocab import AbortSignal, ToolResult

needs_rg = pytest.mark.skipif(rg_path() is None, reason="the ripgrep package is not installed")

TREE: dict[str, str | bytes] = {
    **PROJECT,
    ".hidden/notes.txt": "TODO hidden folder\n",
    "crlf.txt": "TODO: one\r\nTODO: two\r\nend\r\n",
    "long.txt": "TODO " + "x" * 1000 + "\n",
    "many.txt": "".join(f"TODO {n}\n" for n in range(300)),
    "bad-utf8.txt": b"TODO caf\xe9\n",
    "no-newline.txt": "last TODO",
    "src/deep/er/file.py": "def f():\n    pass  # TODO deep\n",
}

QUERIES: list[dict[str, object]] = [
    {"pattern": "TODO"},
    {"pattern": "todo", "ignore_case": True},
    {"pattern": r"^\s+return \d"},
    {"pattern": "TODO: two$"},
    {"pattern": "TODO", "glob": "*.py"},
    {"pattern": "TODO", "glob": "src/**/*.ts"},
    {"pattern": "TODO", "path": "src"},
    {"pattern": "TODO", "path": "src", "glob": "web/*"},
    {"pattern": "TODO", "path": "src/main.py"},
    {"pattern": "caf"},  # rg's "." never matches a byte that is not UTF-8; Python's matches U+FFFD
    {"pattern": "nothing matches this"},
    {"pattern": "(a+)+$"},
]


async def _grep(
    workspace: Workspace, signal: AbortSignal | None = None, **kw: object
) -> ToolResult:
    context = ToolContext(signal or AbortSignal(), lambda u: None, lambda a: None, workspace, "c1")
    return await Grep(workspace).execute(GrepArgs.model_validate(kw), context)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    workspace = tree(root, TREE)
    (root / "caf\udce9-name.txt").write_text("TODO named\n")  # a name that is not UTF-8
    return workspace


@needs_rg
async def test_ripgrep_and_the_python_fallback_agree(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_rg = [(await _grep(workspace, **query)).output for query in QUERIES]
    monkeypatch.setattr(search_module, "rg_path", lambda: None)
    fallback = [(await _grep(workspace, **query)).output for query in QUERIES]

    for query, one, other in zip(QUERIES, with_rg, fallback, strict=True):
        assert one == other, query
    assert "caf\\xe9-name.txt:1:TODO named" in str(with_rg[0])
    assert "[65 more matches not shown (315 in 15 files)" in str(with_rg[0])


@needs_rg
async def test_many_matching_files_are_reported_in_walk_order_by_both_engines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ripgrep searches files in parallel and prints them in any order. In walk order "a/..."
    # comes before "a-b/..." (a plain string sort would put "-" before "/"); the many matches
    # of the later folders make the ripgrep side drop files on the way.
    lines_in = {"a": 5, "a/c": 5, "a/c-d": 5, "a-b": 100, "a.b": 100, "b": 100}
    files: dict[str, str | bytes] = {
        f"{folder}/{n:02}.txt": "".join(f"hit {k}\n" for k in range(count))
        for folder, count in lines_in.items()
        for n in range(8)
    }
    workspace = tree(tmp_path / "ws", files)

    with_rg = (await _grep(workspace, pattern="hit")).output
    monkeypatch.setattr(search_module, "rg_path", lambda: None)
    fallback = (await _grep(workspace, pattern="hit")).output

    assert with_rg == fallback
    lines = str(with_rg).splitlines()
    assert lines[:2] == ["a/00.txt:1:hit 0", "a/00.txt:2:hit 1"]
    assert lines[120] == "a-b/00.txt:1:hit 0"  # after 3 x 8 files of 5 matches in a/
    assert lines[-2] == "a-b/01.txt:30:hit 29"
    assert lines[-1].startswith("[2270 more matches not shown (2520 in 48 files);")


def test_the_first_files_hold_the_first_matches_whatever_order_they_come_in() -> None:
    first = _FirstFiles()
    for name in [f"f{n:03}" for n in range(200)][::-1]:  # the last file first
        first.begin(name)
        for line in range(10):
            first.match(f"{name}:{line}".encode())

    kept = [line for _rel, lines in first.in_order() for line in lines]

    assert kept[:MAX_GREP_MATCHES] == [
        f"f{n:03}:{line}".encode() for n in range(25) for line in range(10)
    ]
    assert first.lines <= 5 * MAX_GREP_MATCHES  # the later files were dropped on the way


@needs_rg
async def test_a_catastrophic_pattern_is_linear_under_ripgrep(workspace: Workspace) -> None:
    (workspace.root / "as.txt").write_text("a" * 60 + "b\n" + "a" * 60 + "\n")

    result = await _grep(workspace, pattern="^(a+)+$", path="as.txt")

    assert result.output == "as.txt:2:" + "a" * 60


async def test_a_catastrophic_pattern_in_the_fallback_is_stopped_at_its_time_limit(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_module, "rg_path", lambda: None)
    monkeypatch.setattr(search_module, "GREP_TIMEOUT_S", 0.5)
    (workspace.root / "as.txt").write_text("a" * 60 + "b\n")

    result = await _grep(workspace, pattern="^(a+)+$", path="as.txt")

    assert result.is_error
    assert str(result.output).startswith("grep stopped after 0.5 s without finishing.")


async def test_aborting_kills_the_fallback_worker(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_module, "rg_path", lambda: None)
    (workspace.root / "as.txt").write_text("a" * 60 + "b\n")
    signal = AbortSignal()
    signal.abort("user_cancelled")

    with pytest.raises(ToolAborted):
        await _grep(workspace, signal, pattern="^(a+)+$", path="as.txt")


async def test_a_cancel_while_the_worker_searches_ends_it_and_the_reaper_forgets_it(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_module, "rg_path", lambda: None)
    (workspace.root / "as.txt").write_text("a" * 60 + "b\n")
    signal = AbortSignal()
    workers: list[int] = []

    def track_then_cancel(group: int) -> None:
        _groups.track(group)  # the reaper would end it with the agent
        workers.append(group)
        signal.abort("user_cancelled")  # the person cancels while it searches

    monkeypatch.setattr(rg_module, "track", track_then_cancel)
    with pytest.raises(ToolAborted):
        await _grep(workspace, signal, pattern="^(a+)+$", path="as.txt")

    [worker] = workers
    with pytest.raises(ProcessLookupError):  # killed and reaped before the call returned
        os.kill(worker, 0)
    assert worker not in _groups._live


def test_the_fallback_worker_ends_itself_when_its_cpu_budget_is_spent(tmp_path: Path) -> None:
    (tmp_path / "as.txt").write_text("a" * 60 + "b\n")
    query = Query(root=str(tmp_path), top=str(tmp_path), top_shown=".", pattern="^(a+)+$")

    done = subprocess.run(
        [*WORKER, "1"],
        input=json.dumps(asdict(query)).encode(),
        capture_output=True,
        timeout=60,
    )

    assert done.returncode in (-signal.SIGXCPU, -signal.SIGKILL)  # no agent needed to stop it
    assert done.stderr == b""


def test_the_fallback_worker_loads_only_the_search_and_the_walk(tmp_path: Path) -> None:
    # Each search starts a Python: importing every tool (the packages' `__init__`s) cost it
    # seconds of CPU under load, for two modules' worth of work.
    (tmp_path / "notes.txt").write_text("one TODO\n")
    query = Query(root=str(tmp_path), top=str(tmp_path), top_shown=".", pattern="TODO")
    python, isolated, *code = WORKER

    done = subprocess.run(
        [python, isolated, "-X", "importtime", *code],
        input=json.dumps(asdict(query)).encode(),
        capture_output=True,
        timeout=60,
        check=True,
    )

    loaded = {
        line.rsplit("|", 1)[-1].strip()
        for line in done.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    assert {name for name in loaded if name.startswith("tui_agent")} == {
        "tui_agent.lazy_dataclass",
        "tui_agent.tools._pygrep",
        "tui_agent.tools._walk",
    }
    assert json.loads(done.stdout)["lines"] == ["notes.txt:1:one TODO"]
