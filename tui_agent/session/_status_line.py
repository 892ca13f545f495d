"""Which status-line command the person set, if any.

`status_line` in `config.toml` (a command, or `{command = "...", padding = N}`), else the
`statusLine` of Claude Code's user settings (`~/.claude/settings.json`,
`{"type": "command", "command": "...", "padding": 0}`), so a script written for Claude Code
works unchanged. A project's `.claude/settings.json` is not read for it: a repository's command
would run at every refresh, before anyone looked at it. The app runs the command
(`ui/status_line.py`).
"""

from __future__ import annotations

import json
from typing import Any

from tui_agent.lazy_dataclass import dataclass
from tui_agent.session._config import Config
from tui_agent.session._paths import USER_CLAUDE, claude_user_settings


@dataclass(frozen=True)
class StatusLineCommand:
    command: str
    padding: int = 0
    source: str = "config.toml"


class StatusLineProblem(ValueError):
    """The setting is there but cannot be used; the message says where and why."""


def status_line_command(config: Config) -> StatusLineCommand | None:
    setting = config.status_line
    if isinstance(setting, str):
        return StatusLineCommand(setting) if setting.strip() else None
    if setting is not None:
        return StatusLineCommand(setting.command, setting.padding)
    return _claude_status_line()


def _claude_status_line() -> StatusLineCommand | None:
    file = claude_user_settings()
    try:
        data: Any = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise StatusLineProblem(f"{USER_CLAUDE}: cannot read it for statusLine: {exc}") from exc
    setting = data.get("statusLine") if isinstance(data, dict) else None
    if setting is None:
        return None
    command = setting.get("command") if isinstance(setting, dict) else None
    kind = setting.get("type", "command") if isinstance(setting, dict) else None
    padding = setting.get("padding", 0) if isinstance(setting, dict) else 0
    if kind != "command" or not isinstance(command, str) or not command.strip():
        raise StatusLineProblem(
            f'{USER_CLAUDE}: statusLine must be {{"type": "command", "command": "..."}}'
        )
    if not isinstance(padding, int) or not 0 <= padding <= 8:
        padding = 0
    return StatusLineCommand(command, padding, USER_CLAUDE)
