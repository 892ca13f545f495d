"""Test-wide settings: every test runs with its own TUI_AGENT_HOME and no provider keys,
property tests never fail for being slow (a busy machine is not a bug), tests that share an
expensive set-up run on one xdist worker, and the processes tests start get a terminal's signal
defaults."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tui_agent import keys

settings.register_profile("tui-agent", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("tui-agent")

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    # Tests send SIGINT and SIGHUP to the agent, which keeps an "ignore" it inherits (nohup's
    # choice stands). A suite started in the background (`make test &`, nohup) would hand that
    # on to every agent it starts and those tests would wait for ever: its processes start with
    # a terminal's defaults instead (a test of nohup's case sets it for its own child).
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)


# Tests whose set-up is built once per worker process (a module or session fixture, a cache).
# Under `--dist loadgroup` (make test) each set runs on one worker, so it is built once, not on
# every worker that happens to get one of its tests; xdist also starts the largest sets first,
# so none of them is left for the end of the run.
SHARED_SET_UP = {
    "tests/e2e/test_faults.py": "faults",  # 25 agents killed at each moment of a turn
    "tests/acp/test_acp_typescript.py": "acp-typescript",  # the Node client's two sessions
    "tests/test_check_fences.py": "fences",  # the libraries' private names, from their source
    "tests/test_packaging.py": "packaging",  # the package's imports, the installed packages
    "tests/rerun/": "rerun",  # the corpus of sessions, run through the real loop
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = item.path.relative_to(ROOT).as_posix()
        group = next((g for prefix, g in SHARED_SET_UP.items() if path.startswith(prefix)), None)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("TUI_AGENT_HOME", str(home))
    # Claude Code's user settings (their permission rules) come from here, never the machine's.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "claude"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name in list(__import__("os").environ):
        if name.startswith("TEXTUAL_"):
            monkeypatch.delenv(name, raising=False)
    # Keys that an in-process `open_loop` took out of the environment stay with their test.
    monkeypatch.setattr(keys, "_held", {})
    monkeypatch.setattr(keys, "_names", keys._names)
    monkeypatch.setattr(keys, "_patterns", keys._patterns)
    yield home
