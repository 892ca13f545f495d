"""Where configuration and data live: `$TUI_AGENT_HOME`, or the platform's user directories.

With `TUI_AGENT_HOME` set (tests always set it) everything is under that one directory:
`config.toml`, `sessions/<id>/` and the per-workspace session index. Without it, the config
file is in the user config dir and the data in the user data dir (platformdirs). Paths are
read from the environment at each call, never cached, so a changed environment takes effect.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import platformdirs

from tui_agent.lazy_dataclass import dataclass

APP_NAME = "tui-agent"
HOME_ENV = "TUI_AGENT_HOME"
USER_CLAUDE = "~/.claude/settings.json"  # the label; the file honours $CLAUDE_CONFIG_DIR


def claude_user_settings() -> Path:
    """Claude Code's user settings, which tui-agent reads so a person's setup comes along."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else Path.home() / ".claude") / "settings.json"


@dataclass(frozen=True)
class AppPaths:
    config_file: Path
    data_dir: Path

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> AppPaths:
        env = os.environ if environ is None else environ
        home = env.get(HOME_ENV)
        if home:
            root = Path(home).expanduser()
            return cls(config_file=root / "config.toml", data_dir=root)
        return cls(
            config_file=platformdirs.user_config_path(APP_NAME) / "config.toml",
            data_dir=platformdirs.user_data_path(APP_NAME),
        )

    @property
    def sessions_dir(self) -> Path:
        return self.data_dir / "sessions"

    @property
    def index_dir(self) -> Path:
        """One small file per workspace, listing the sessions started there."""
        return self.data_dir / "workspaces"
