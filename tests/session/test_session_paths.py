"""Where configuration and data live."""

from __future__ import annotations

from pathlib import Path

import platformdirs

from tui_agent.session import AppPaths


def test_tui_agent_home_holds_config_sessions_and_index(tmp_path: Path) -> None:
    paths = AppPaths.from_env({"TUI_AGENT_HOME": str(tmp_path)})

    assert paths.config_file == tmp_path / "config.toml"
    assert paths.sessions_dir == tmp_path / "sessions"
    assert paths.index_dir.parent == tmp_path


def test_without_a_home_the_platform_user_directories_are_used() -> None:
    paths = AppPaths.from_env({})

    assert paths.config_file == platformdirs.user_config_path("tui-agent") / "config.toml"
    assert paths.data_dir == platformdirs.user_data_path("tui-agent")
