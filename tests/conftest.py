"""Test-wide settings: every test runs with its own TUI_AGENT_HOME and no provider keys, and
property tests never fail for being slow (a busy machine is not a bug)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tui_agent import keys

settings.register_profile("tui-agent", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("tui-agent")


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
