"""A newcomer's first commands: `make run` tries the app on a scratch copy of the project and
writes nothing into the clone, and `tui-agent --help` names every subcommand."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from tui_agent.cli import SUBCOMMANDS, main

ROOT = Path(__file__).resolve().parents[2]
NOT_THE_PROJECT = {
    ".venv",
    ".git",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
}


def tree(root: Path) -> dict[str, int]:
    """Every file of the clone (its tools' caches aside) with its modification time."""
    found: dict[str, int] = {}
    for folder, folders, files in os.walk(root):
        folders[:] = [name for name in folders if name not in NOT_THE_PROJECT]
        for name in files:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = os.lstat(path).st_mtime_ns
    return found


def stamp() -> str:
    """The Makefile's install stamp: marking it done keeps `make run` from reinstalling."""
    text = b"".join((ROOT / name).read_bytes() for name in ("pyproject.toml", "constraints.txt"))
    return f".venv/.installed-{hashlib.sha1(text).hexdigest()[:12]}"


def test_make_run_plays_the_demo_on_a_scratch_copy_and_leaves_the_clone_alone(
    tmp_path: Path,
) -> None:
    before = tree(ROOT)
    scratch = tmp_path / "try"
    done = subprocess.run(
        ["make", "-s", "-o", stamp(), "run", f"RUN_WORKSPACE={scratch}", "ARGS=-p hi --yolo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "offline demo" in done.stdout
    assert (scratch / "NOTES-tui-agent-demo.md").is_file()  # the demo wrote, but elsewhere
    assert (scratch / "README.md").read_bytes() == (ROOT / "README.md").read_bytes()
    assert tree(ROOT) == before


def help_text(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """What `tui-agent ARGV` prints; argparse exits, a subcommand may return instead."""
    try:
        code = main(argv)
    except SystemExit as exit:
        code = exit.code
    assert code in (0, None)
    return capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_help_names_each_subcommand_which_has_its_own_help(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert f"\n  tui-agent {name} " in help_text(["--help"], capsys)
    assert help_text([name, "--help"], capsys).startswith(f"usage: tui-agent {name}")
