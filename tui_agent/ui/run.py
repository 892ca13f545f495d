"""Running the app for the command line: draw first, open the loop in the app's asyncio loop.

The loop's machines must run on the event loop that drives the screen, so the app runs under
`asyncio.run` with `run_async` and opens the loop itself (an `OpeningLoop` stands in until it
is ready, so the first frame does not wait for the loop stack to load). A configuration or
session error ends the app and is printed to stderr (exit status 2). /new, /resume and /model
open another loop the same way (`SessionHooks`); the app closes the one it replaces.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from tui_agent.loop.api import LoopApi, LoopInfo
from tui_agent.session import LoopConfig
from tui_agent.ui.hooks import SessionHooks, SessionSummary
from tui_agent.ui.opening import OpeningLoop

if TYPE_CHECKING:
    from tui_agent.ui.app import TuiAgentApp

EXIT_OK = 0
EXIT_SETUP = 2


def run_app(config: LoopConfig, prompt: str | None) -> int:
    return asyncio.run(_run(config, prompt))


async def _run(config: LoopConfig, prompt: str | None) -> int:
    from tui_agent.ui.app import TuiAgentApp

    opening = OpeningLoop(_starting(config), lambda: _open(config))
    app = TuiAgentApp(opening, initial_prompt=prompt, hooks=session_hooks(config))
    stopped = _quit_on_signals(app)
    try:
        await app.run_async()
    finally:
        await app.loop.close()
    if app.setup_error is not None:
        print(f"tui-agent: {app.setup_error}", file=sys.stderr)
        return EXIT_SETUP
    return 128 + stopped[0] if stopped else EXIT_OK


def _quit_on_signals(app: TuiAgentApp) -> list[int]:
    """SIGTERM and SIGHUP (the terminal went away) quit as Ctrl+Q does: the turn is cancelled,
    its tools ended and the log sealed, then the app exits with 128 + the signal's number."""
    received: list[int] = []
    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        if not received:
            received.append(signum)
            app.action_quit_app()

    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) != signal.SIG_IGN:  # nohup's choice stands
            loop.add_signal_handler(signum, on_signal, signum)
    return received


async def _open(config: LoopConfig) -> LoopApi:
    # The whole loop stack loads in a worker thread, so the screen keeps drawing meanwhile.
    open_loop = await asyncio.to_thread(_load_open_loop)
    return await open_loop(config)


def _load_open_loop() -> Callable[[LoopConfig], Awaitable[LoopApi]]:
    from tui_agent.session import open_loop

    return open_loop


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


def _turn_end_notice() -> str:
    """Read when a turn ends unfocused, so an edit to config.toml applies at once."""
    from tui_agent.session import ConfigError, load_config

    try:
        return load_config().turn_end_notice
    except ConfigError:
        return "bell+desktop"  # the mistake was reported when the loop opened: the default
