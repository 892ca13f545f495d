"""Running the app for the command line: open the loop inside the app's asyncio loop, then run.

The loop's machines must run on the event loop that drives the screen, so the service is built
under `asyncio.run` and the app runs there with `run_async`. /new, /resume and /model open
another loop the same way (`SessionHooks`); the app closes the one it replaces.
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import replace

from tui_agent.loop.api import LoopApi
from tui_agent.session import LoopConfig, LoopSetupError, open_loop
from tui_agent.ui.hooks import SessionHooks, SessionSummary

EXIT_OK = 0
EXIT_SETUP = 2


def run_app(config: LoopConfig, prompt: str | None) -> int:
    return asyncio.run(_run(config, prompt))


async def _run(config: LoopConfig, prompt: str | None) -> int:
    try:
        loop = await open_loop(config)
    except LoopSetupError as exc:
        print(f"tui-agent: {exc}", file=sys.stderr)
        return EXIT_SETUP
    from tui_agent.ui.app import TuiAgentApp

    app = TuiAgentApp(loop, initial_prompt=prompt, hooks=session_hooks(config))
    try:
        await app.run_async()
    finally:
        await app.loop.close()
    return EXIT_OK


def _when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


def session_hooks(config: LoopConfig) -> SessionHooks:
    """Callbacks that reopen the loop with the same choices except the one the command changes."""
    base = replace(config, resume=None, continue_latest=False)

    async def new_session() -> LoopApi:
        return await open_loop(base)

    async def resume(session_id: str) -> LoopApi:
        return await open_loop(replace(base, resume=session_id))

    async def list_sessions() -> list[SessionSummary]:
        from tui_agent.session import list_sessions as listing

        return [
            SessionSummary(info.session_id, info.title or "(untitled)", _when(info.last_active))
            for info in listing(config.workspace.resolve())
        ]

    async def switch_model(session_id: str, model: str) -> LoopApi:
        return await open_loop(replace(base, resume=session_id, model=model))

    return SessionHooks(
        new_session=new_session,
        list_sessions=list_sessions,
        resume=resume,
        switch_model=switch_model,
    )
