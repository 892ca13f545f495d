"""How the app looks: its theme (`ui/themes.py`) and the status bar's own line
(`ui/status_line.py`), set from `Appearance` and changed by `/theme`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.ui.hooks import Appearance
from tui_agent.ui.status_line import OwnLine
from tui_agent.ui.themes import (
    DEFAULT_THEME,
    choose_theme,
    follow_code_styles,
    set_theme_before_start,
)

if TYPE_CHECKING:
    from tui_agent.ui.app import TuiAgentApp


class Look:
    def __init__(self, app: TuiAgentApp, appearance: Appearance) -> None:
        self._app = app
        self._appearance = appearance
        self._own_line: OwnLine | None = None
        self._problems = list(appearance.problems)
        self._closed = False
        self._set_theme()  # built in the app's constructor: before its stylesheet is parsed

    def _set_theme(self) -> None:
        """Before the app runs: our themes, then the configured one (or the default)."""
        problem = set_theme_before_start(self._app, self._appearance.theme or DEFAULT_THEME)
        if problem:
            self._problems.append(f"theme: {problem}")

    def follow_theme(self) -> None:
        """Once mounted: what follows the theme (Rich's inline-code style)."""
        follow_code_styles(self._app)

    def start(self, workspace: Path) -> None:
        """After the first frame, so git, the command and reading the settings never hold it
        back; the settings' problems are said then, once the transcript is there to hold them."""
        settings = self._appearance.settings
        if settings is None:
            self._show(self._appearance, workspace)
        else:
            self._app._call(self._read(settings, workspace), "reading the settings")

    async def _read(self, settings: Callable[[], Appearance], workspace: Path) -> None:
        appearance = await asyncio.to_thread(settings)
        if not self._closed:
            self._show(appearance, workspace)

    def _show(self, appearance: Appearance, workspace: Path) -> None:
        for problem in (*self._problems, *appearance.problems):
            self._app.vm.add_marker("warning", problem)
        screen = self._app.main_screen
        command = appearance.status_line
        self._own_line = OwnLine(screen.status_bar, self._app.vm, workspace, command)

    def refresh_git(self) -> None:
        if self._own_line is not None:
            self._own_line.refresh_git()

    def choose(self, name: str) -> None:
        """`/theme`: list the themes, or switch to one for this session."""
        vm = self._app.vm
        if not name:
            names = sorted(self._app.available_themes)
            listed = ", ".join(f"[{n}]" if n == self._app.theme else n for n in names)
            vm.add_marker("info", f"themes: {listed}  (/theme NAME switches)")
            return
        problem = choose_theme(self._app, name)
        if problem:
            vm.add_marker("warning", problem)
        else:
            vm.add_marker("info", f'theme {name}; theme = "{name}" in config.toml keeps it')

    def close(self) -> None:
        self._closed = True
        if self._own_line is not None:
            self._own_line.close()
