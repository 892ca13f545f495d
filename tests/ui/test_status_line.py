"""The status bar's own line: a status-line command fed the session as JSON, or the git branch."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from rich.text import Text

from tests.ui.fake_loop import INFO, FakeLoop
from tests.ui.real_loop import until
from tui_agent.session import (
    StatusLineCommand,
    StatusLineProblem,
    parse_config,
    status_line_command,
)
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.hooks import Appearance
from tui_agent.ui.run import _appearance
from tui_agent.ui.state import MarkerBlock
from tui_agent.ui.status_line import StatusLineRunner, git_state


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    who = ("-c", "user.name=t", "-c", "user.email=t@t")
    git(folder, *who, "commit", "-q", "--allow-empty", "-m", "0")
    return folder


# ---------------------------------------------------------------- git


async def test_git_state_names_the_branch_and_sees_changes(repo: Path, tmp_path: Path) -> None:
    clean = await git_state(repo)
    assert clean is not None and (clean.branch, clean.dirty) == ("main", False)
    (repo / "new.txt").write_text("x")
    dirty = await git_state(repo)
    assert dirty is not None and dirty.label == "⎇ main*"
    git(repo, "checkout", "-q", "--detach")
    detached = await git_state(repo)
    assert detached is not None and len(detached.branch) == 7  # the short commit
    outside = tmp_path / "plain"
    outside.mkdir()
    assert await git_state(outside) is None


async def test_the_status_bar_shows_the_branch_without_a_command(repo: Path) -> None:
    (repo / "edited.txt").write_text("x")
    app = TuiAgentApp(FakeLoop(info=replace(INFO, workspace=str(repo))))
    async with app.run_test(size=(140, 24)) as pilot:
        await until(pilot, lambda: "⎇ main*" in str(app.status_bar.render()))


# ---------------------------------------------------------------- the command


class Shown(list[Text]):
    """What the runner showed, with a wait for the n-th line."""

    def __init__(self) -> None:
        super().__init__()
        self._changed = asyncio.Event()

    def __call__(self, text: Text) -> None:
        self.append(text)
        self._changed.set()

    async def count(self, n: int) -> None:
        while len(self) < n:
            self._changed.clear()
            await self._changed.wait()


async def poll(check: Callable[[], bool]) -> None:
    """Wait for a condition outside the event loop (a file, a process), up to 20 s."""
    for _ in range(2000):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never held")


def script(tmp_path: Path, body: str) -> str:
    file = tmp_path / "status.py"
    file.write_text(body)
    return f"{sys.executable} {file}"


async def test_the_first_line_shows_with_its_colours(tmp_path: Path) -> None:
    shown = Shown()
    command = "printf '\\033[31mred\\033[0m line\\nsecond\\n'"
    runner = StatusLineRunner(command, tmp_path, shown, min_interval_s=0)
    runner.request("{}")
    await shown.count(1)
    assert shown[0].plain == "red line"
    assert [str(span.style) for span in shown[0].spans] == ["color(1)"]  # ANSI red, kept


async def test_states_asked_for_during_a_run_become_one_later_run(tmp_path: Path) -> None:
    gate, seen = tmp_path / "gate", tmp_path / "seen"
    body = (
        "import sys, os, time\n"
        f"open({str(seen)!r}, 'a').write(sys.stdin.read() + '\\n')\n"
        f"while not os.path.exists({str(gate)!r}): time.sleep(0.01)\n"
        "print('ok')\n"
    )
    shown = Shown()
    runner = StatusLineRunner(script(tmp_path, body), tmp_path, shown, min_interval_s=0)
    runner.request('"first"')
    await poll(seen.exists)
    runner.request('"second"')
    runner.request('"third"')
    gate.touch()
    await shown.count(2)
    assert seen.read_text().split() == ['"first"', '"third"']


async def test_a_failing_command_blanks_the_line(tmp_path: Path) -> None:
    shown = Shown()
    runner = StatusLineRunner("echo nope; exit 3", tmp_path, shown, min_interval_s=0)
    runner.request("{}")
    await shown.count(1)
    assert shown == [Text()]


async def test_a_hanging_command_is_killed_with_its_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "child"
    command = f"sleep 300 & echo $! > {pid_file}; wait"
    shown = Shown()
    runner = StatusLineRunner(command, tmp_path, shown, min_interval_s=0, timeout_s=0.5)
    runner.request("{}")
    await poll(lambda: pid_file.exists() and pid_file.read_text().strip() != "")
    child = int(pid_file.read_text())
    await poll(lambda: not alive(child))  # the timeout killed the whole group
    assert shown == []  # the line keeps what it had


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie waiting for init to reap it is dead


async def test_the_app_feeds_the_command_claude_codes_fields(tmp_path: Path) -> None:
    got = tmp_path / "got.json"
    body = (
        "import json, sys\n"
        "state = json.load(sys.stdin)\n"
        f"open({str(got)!r}, 'w').write(json.dumps(state))\n"
        "window = state['context_window']\n"
        "print(f\"[{state['model']['display_name']}] ctx {window['used_percentage']}%\")\n"
    )
    command = StatusLineCommand(script(tmp_path, body), padding=1)
    app = TuiAgentApp(FakeLoop(), appearance=Appearance(status_line=command))
    async with app.run_test(size=(140, 24)) as pilot:
        await until(pilot, lambda: f"[{INFO.model}] ctx 0%" in str(app.status_bar.render()))
    state = json.loads(got.read_text())
    assert state["session_id"] == INFO.session_id
    assert state["workspace"]["current_dir"] == INFO.workspace
    assert {"total_cost_usd", "total_duration_ms"} <= set(state["cost"])
    assert state["context_window"]["context_window_size"] == INFO.context_window


async def test_settings_read_after_the_first_frame_bring_the_command_and_their_problems(
    tmp_path: Path,
) -> None:
    # How the command line starts the app: only the theme is read for the first frame, the rest
    # (a worker thread, the configuration's models) after it.
    command = StatusLineCommand(script(tmp_path, "print('from the settings')\n"))
    read = Appearance(status_line=command, problems=("status_line: a problem",))
    app = TuiAgentApp(FakeLoop(), appearance=Appearance(settings=lambda: read))
    async with app.run_test(size=(140, 24)) as pilot:
        await until(pilot, lambda: "from the settings" in str(app.status_bar.render()))
        warnings = [b.text for b in app.vm.blocks if isinstance(b, MarkerBlock)]
        assert "status_line: a problem" in warnings


# ---------------------------------------------------------------- settings


def test_config_takes_a_command_or_claude_codes_table(tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    plain = parse_config('status_line = "~/bin/s.sh"', file)
    assert status_line_command(plain) == StatusLineCommand("~/bin/s.sh")
    table = parse_config('status_line = {type = "command", command = "s", padding = 2}', file)
    assert status_line_command(table) == StatusLineCommand("s", 2)


def test_claude_codes_user_setting_is_read(tmp_path: Path) -> None:
    settings = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"statusLine": {"type": "command", "command": "cc.sh"}}))
    found = status_line_command(parse_config("", tmp_path / "c.toml"))
    assert found == StatusLineCommand("cc.sh", 0, "~/.claude/settings.json")
    settings.write_text(json.dumps({"statusLine": {"type": "static", "text": "x"}}))
    with pytest.raises(StatusLineProblem, match="statusLine"):
        status_line_command(parse_config("", tmp_path / "c.toml"))


def test_the_command_line_reads_the_theme_for_the_first_frame_and_the_rest_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUI_AGENT_HOME", str(tmp_path))
    (tmp_path / "config.toml").write_text('theme = "tui-agent-light"\nstatus_line = "s.sh"\n')
    first = _appearance()
    assert (first.theme, first.status_line) == ("tui-agent-light", None)
    assert first.settings is not None
    assert first.settings().status_line == StatusLineCommand("s.sh")
    (tmp_path / "config.toml").write_text("theme = [")  # said when the loop opens (and ends it)
    assert _appearance().theme is None
