"""Running the app for the command line: draw first, open the loop in the app's asyncio loop.

The loop's machines must run on the event loop that drives the screen, so the app runs under
`asyncio.run` with `run_async` and opens the loop itself (an `OpeningLoop` stands in until it
is ready, so the first frame does not wait for the loop stack to load). A configuration or
session error ends the app and is printed to stderr (exit status 2). /new, /resume and /model
open another loop the same way (`SessionHooks`); the app closes the one it replaces.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
import tomllib
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from tui_agent.lazy_dataclass import build_waiting
from tui_agent.loop.info import LoopInfo
from tui_agent.session import AppPaths, LoopConfig
from tui_agent.ui.hooks import Appearance, Repository, SessionHooks, SessionSummary
from tui_agent.ui.opening import OpeningLoop

if TYPE_CHECKING:
    from tui_agent.loop.api import LoopApi
    from tui_agent.ui.app import TuiAgentApp

EXIT_OK = 0
EXIT_SETUP = 2
QUIT_DEADLINE_S = 2.0  # after a signal or a lost terminal, the process ends within this


def run_app(config: LoopConfig, prompt: str | None) -> int:
    return asyncio.run(_run(config, prompt))


async def _run(config: LoopConfig, prompt: str | None) -> int:
    from tui_agent.ui.app import TuiAgentApp

    quitting = _Quitting()
    # The app asks about what the workspace brings before it opens the loop (`repository`).
    asked = replace(config, trust_asked=True)
    opening = OpeningLoop(_starting(config), lambda: _open(asked))
    hooks = replace(
        session_hooks(asked),
        terminal_lost=quitting.hang_up,
        repository=lambda: asyncio.to_thread(_repository, config),
    )
    app = TuiAgentApp(opening, initial_prompt=prompt, hooks=hooks, appearance=_appearance())
    quitting.watch(app)
    try:
        await app.run_async()
    finally:
        await app.loop.close()
    if app.setup_error is not None:
        print(f"tui-agent: {app.setup_error}", file=sys.stderr)
        return EXIT_SETUP
    return 128 + quitting.signum if quitting.signum else EXIT_OK


class _Quitting:
    """SIGTERM, SIGHUP and a terminal that hung up (taken as SIGHUP) quit as Ctrl+Q does: the turn
    is cancelled, its tools ended and the log sealed, then the app exits with 128 + the signal's
    number. The handlers are plain signal handlers, not the event loop's, so a signal is heard
    even if the loop were stuck; and whatever the quit meets, the process ends QUIT_DEADLINE_S
    after it began (`os._exit`: the reaper then ends the tool processes, and the log is left as a
    crash leaves it, repaired when the session is next opened). A second signal ends it at once.
    """

    def __init__(self) -> None:
        self.signum = 0
        self._app: TuiAgentApp | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def watch(self, app: TuiAgentApp) -> None:
        self._app = app
        self._loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(signum) != signal.SIG_IGN:  # nohup's choice stands
                signal.signal(signum, self._on_signal)

    def hang_up(self) -> None:
        """The terminal is gone (called on the event loop): quit, as for SIGHUP."""
        if not self.signum:
            self._begin(signal.SIGHUP)
            self._quit()

    def _on_signal(self, signum: int, frame: object) -> None:
        if self.signum:
            self._exit_now()
        self._begin(signum)
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._quit)

    def _begin(self, signum: int) -> None:
        self.signum = signum
        deadline = threading.Timer(QUIT_DEADLINE_S, self._exit_now)
        deadline.daemon = True
        deadline.start()

    def _quit(self) -> None:
        assert self._app is not None
        self._app.action_quit_app()

    def _exit_now(self) -> None:
        if self._app is not None:
            from tui_agent.ui.terminal_driver import restore_terminal_now

            restore_terminal_now(self._app)
        os._exit(128 + self.signum)


async def _open(config: LoopConfig) -> LoopApi:
    # The whole loop stack loads in a worker thread, so the screen keeps drawing meanwhile.
    open_loop = await asyncio.to_thread(_load_open_loop)
    return await open_loop(config)


def _load_open_loop() -> Callable[[LoopConfig], Awaitable[LoopApi]]:
    from tui_agent.session import open_loop

    # Their first uses come on the event loop, between keys: built here, they cost no key.
    build_waiting()
    return open_loop


def _repository(config: LoopConfig) -> Repository | None:
    from tui_agent.session import repository_prompt

    return repository_prompt(config)


def _starting(config: LoopConfig) -> LoopInfo:
    """What the status bar shows for the moment before the loop is open."""
    return LoopInfo(
        provider=config.provider or "tui-agent",
        model=config.model or "starting",
        context_window=0,
        approval_mode="yolo" if config.yolo else (config.approval_mode or "ask"),
        session_id="",
        workspace=str(config.workspace),
        demo=False,
    )


def _when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


def session_hooks(config: LoopConfig) -> SessionHooks:
    """Callbacks that reopen the loop with the same choices except the one the command changes."""
    base = replace(config, resume=None, continue_latest=False)

    async def new_session() -> LoopApi:
        return await _open(base)

    async def resume(session_id: str) -> LoopApi:
        return await _open(replace(base, resume=session_id))

    async def list_sessions() -> list[SessionSummary]:
        from tui_agent.session import list_sessions as listing

        return [
            SessionSummary(info.session_id, info.title or "(untitled)", _when(info.last_active))
            for info in listing(config.workspace.resolve())
        ]

    async def switch_model(session_id: str, model: str) -> LoopApi:
        return await _open(replace(base, resume=session_id, model=model))

    return SessionHooks(
        new_session=new_session,
        list_sessions=list_sessions,
        resume=resume,
        switch_model=switch_model,
        turn_end_notice=_turn_end_notice,
    )


def _appearance() -> Appearance:
    """The theme for the first frame: config.toml's `theme` alone, read without validating the
    file (its models load pydantic, which the frame goes without; a mistake in the file is
    reported when the loop opens, and ends the app). The rest is read after the frame."""
    try:
        data = tomllib.loads(AppPaths.from_env().config_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        data = {}
    theme = data.get("theme")
    return Appearance(theme=theme if isinstance(theme, str) else None, settings=_settings)


def _settings() -> Appearance:
    """The theme and status line from config.toml; a mistake in it is reported when the loop
    opens, so here it only means the defaults."""
    from tui_agent.session import ConfigError, StatusLineProblem, load_config, status_line_command

    try:
        config = load_config()
    except ConfigError:
        return Appearance()
    try:
        command = status_line_command(config)
    except StatusLineProblem as problem:
        return Appearance(theme=config.theme, problems=(str(problem),))
    return Appearance(theme=config.theme, status_line=command)


def _turn_end_notice() -> str:
    """Read when a turn ends unfocused, so an edit to config.toml applies at once."""
    from tui_agent.session import ConfigError, load_config

    try:
        return load_config().turn_end_notice
    except ConfigError:
        return "bell+desktop"  # the mistake was reported when the loop opened: the default
