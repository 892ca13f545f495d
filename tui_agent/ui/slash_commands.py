"""What the built-in slash commands do: one function per command, `(app, arg) -> None`, and the
text `/mcp` shows (`/status`, `/permissions` and `/cost` show `loop.reports`' texts).

The table that names them, with their help, is `commands.COMMANDS`. A command that would cancel
a running turn asks first (`confirmed`): it goes ahead when it is sent again within
`CONFIRM_WINDOW_S`. A command that waits on the loop runs as a task (`TuiAgentApp._call`).
The reports and the screens a command shows are imported when it runs: none of them is on the
app's first frame, which they would delay (`tests/test_imports.py` counts them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from textual.screen import Screen

if TYPE_CHECKING:
    from tui_agent.loop.api import LoopApi
    from tui_agent.loop.events import McpServerInfo
    from tui_agent.ui.app import TuiAgentApp

T = TypeVar("T")

CONFIRM_WINDOW_S = 30.0  # a command that would cancel the turn, sent again within this, goes


# ------------------------------------------------------------ the commands


def new(app: TuiAgentApp, arg: str) -> None:
    if app.hooks.new_session is not None:
        app._call(_swap(app, app.hooks.new_session()), "/new")
    else:
        _unavailable(app, "new")


def sessions(app: TuiAgentApp, arg: str) -> None:
    _pick_session(app)


def resume(app: TuiAgentApp, arg: str) -> None:
    if arg and app.hooks.resume is not None:
        app._call(_swap(app, app.hooks.resume(arg)), "/resume")
    else:
        _pick_session(app)


def compact(app: TuiAgentApp, arg: str) -> None:
    if app.vm.busy:
        app.vm.add_marker("warning", "/compact waits until the turn has ended; nothing was done")
    else:
        app._call(app.loop.compact(), "/compact")


def model(app: TuiAgentApp, arg: str) -> None:
    if not arg:
        app.vm.add_marker("info", f"model: {app.vm.status.model} (/model NAME switches)")
    elif app.hooks.switch_model is not None:
        app._call(_switch_model(app, app.hooks.switch_model, arg), "/model")
    else:
        _unavailable(app, "model")


def open_inspector(app: TuiAgentApp, arg: str) -> None:
    app.action_inspect()


def status(app: TuiAgentApp, arg: str) -> None:
    from tui_agent.loop.reports import status_text  # the reports load at first use

    app.vm.add_marker("info", status_text(app.loop.info))


def cost(app: TuiAgentApp, arg: str) -> None:
    from tui_agent.loop.reports import cost_text

    app.vm.add_marker("info", cost_text(app.loop.costs()))


def context(app: TuiAgentApp, arg: str) -> None:
    from tui_agent.ui.context_view import context_of

    app.vm.add_marker("info", context_of(app.loop, app.vm.status.context_tokens))


def export_command(app: TuiAgentApp, arg: str) -> None:
    app._call(_export(app, arg), "/export")


def undo_command(app: TuiAgentApp, arg: str) -> None:
    app._call(_undo(app), "/undo")


def rewind_command(app: TuiAgentApp, arg: str) -> None:
    app._call(_rewind(app), "/rewind")


def theme(app: TuiAgentApp, arg: str) -> None:
    app.look.choose(arg.strip())


def find_text(app: TuiAgentApp, arg: str) -> None:
    app.find_bar.open(arg)


def quit_app(app: TuiAgentApp, arg: str) -> None:
    app.action_quit_app()


def with_argument(arg: str) -> bool:
    return bool(arg)


def always(arg: str) -> bool:
    return True


def permissions(app: TuiAgentApp, arg: str) -> None:
    rules = app.loop.permission_rules()
    action, _, number = arg.partition(" ")
    if not action:
        from tui_agent.loop.reports import permissions_text

        app.vm.add_marker("info", permissions_text(rules))
        return
    if action != "remove" or not number.strip().isdigit():
        app.vm.add_marker("warning", "usage: /permissions, or /permissions remove N")
        return
    index = int(number) - 1
    if not 0 <= index < len(rules):
        app.vm.add_marker("warning", f"no rule number {number} (/permissions lists them)")
        return
    rule = rules[index]
    problem = app.loop.remove_permission_rule(rule)
    app.vm.add_marker(
        "warning" if problem else "info",
        problem or f"removed {rule.effect} {rule.text} ({rule.source})",
    )


def confirmed(app: TuiAgentApp, command: str) -> bool:
    """Whether `/command` may go ahead: when idle, yes; while a turn runs (which it would
    cancel) only when the same command is sent again within `CONFIRM_WINDOW_S`."""
    if not app.vm.busy:
        return True
    now, asked = app.clock(), app._confirming
    if asked is not None and asked[0] == command and now - asked[1] <= CONFIRM_WINDOW_S:
        app._confirming = None
        return True
    app._confirming = (command, now)
    app.vm.add_marker(
        "warning",
        f"a turn is running and /{command} would cancel it: send /{command} again to go ahead",
    )
    return False


def mcp(app: TuiAgentApp, arg: str) -> None:
    action, _, name = arg.partition(" ")
    if not action:
        app.vm.add_marker("info", mcp_text(app.vm.mcp))
    elif action == "reconnect" and name.strip():
        app._call(_reconnect_mcp(app, name.strip()), "/mcp reconnect")
    elif action in ("login", "logout") and name.strip():
        app._call(_mcp_auth(app, action, name.strip()), f"/mcp {action}")
    else:
        app.vm.add_marker("warning", "usage: /mcp, or /mcp reconnect|login|logout NAME")


async def _mcp_auth(app: TuiAgentApp, action: str, name: str) -> None:
    if action == "login":
        app.vm.add_marker("info", f"logging in to MCP server {name}…")
        problem = await app.loop.login_mcp(name)
    else:
        problem = await app.loop.logout_mcp(name)
    if problem:
        app.vm.add_marker("warning", problem)
    else:
        # From the loop, not the view model: its change event may not have arrived yet.
        app.vm.add_marker("info", mcp_text([s for s in app.loop.mcp_servers() if s.name == name]))


async def _reconnect_mcp(app: TuiAgentApp, name: str) -> None:
    app.vm.add_marker("info", f"reconnecting MCP server {name}…")
    if not await app.loop.reconnect_mcp(name):
        app.vm.add_marker("warning", f"no MCP server named {name!r} (/mcp lists them)")
        return
    app.vm.add_marker("info", mcp_text(app.vm.mcp))


def copy_answer(app: TuiAgentApp, arg: str) -> None:
    """`/copy`: the last answer; `/copy N`: the N-th last."""
    if arg and not (arg.isdigit() and int(arg) > 0):
        app.vm.add_marker("warning", "/copy takes a count: /copy 2 is the answer before last")
        return
    nth = int(arg or "1")
    answers = app.vm.answers()
    if nth > len(answers):
        have = f"only {len(answers)}" if answers else "none yet"
        app.vm.add_marker("warning", f"no answer number {nth} from the end ({have})")
        return
    app.keys.copy(answers[-nth], "the last answer" if nth == 1 else f"answer {nth} from the end")


async def _export(app: TuiAgentApp, arg: str) -> None:
    """`/export [md|html|jsonl] [FILE]`: the default file is named after the session, in
    the workspace."""
    from tui_agent.session import FORMATS, SUFFIX, export_file

    first, _, rest = arg.partition(" ")
    fmt = first if first in FORMATS else "md"
    target = (rest if first in FORMATS else arg).strip()
    info = app.loop.info
    path = Path(info.workspace) / (target or f"session-{info.session_id}{SUFFIX[fmt]}")
    written = await asyncio.to_thread(export_file, info.session_id, fmt, path)
    app.vm.add_marker("info", f"exported to {written}")


async def _ask(app: TuiAgentApp, screen: Screen[T]) -> T | None:
    """Show a dialog and wait for its answer (None when it was closed)."""
    answer: asyncio.Future[T | None] = asyncio.get_running_loop().create_future()

    def answered(result: T | None) -> None:
        if not answer.done():
            answer.set_result(result)

    app.push_screen(screen, callback=answered)
    return await answer


async def _undo(app: TuiAgentApp) -> None:
    """Put back the files of the last turn that changed some; ask first when someone else
    changed them since."""
    plan = await app.loop.undo_plan()
    if plan is None:
        app.vm.add_marker("info", "nothing to undo: no file changes left")
        return
    from tui_agent.ui.rewind_screen import RestoreChoice

    if plan.changed_outside and await _ask(app, RestoreChoice.for_undo(plan)) is None:
        return
    await app.loop.restore_files(plan.turn)  # the loop says which files it restored


async def _rewind(app: TuiAgentApp) -> None:
    """Pick an earlier prompt; restore the code, the conversation or both to just before
    it, and put the prompt back in the input."""
    from tui_agent.ui.rewind_screen import (
        CODE,
        CONVERSATION,
        FORK,
        RestoreChoice,
        RewindPicker,
        typed_prompt,
    )

    if app.vm.busy:
        app.vm.add_marker("warning", "/rewind waits until the turn has ended (Esc cancels it)")
        return
    plans = await app.loop.rewind_plans()
    if not plans:
        app.vm.add_marker("info", "nothing to rewind: no prompts yet")
        return
    picked = await _ask(app, RewindPicker(plans))
    if picked is not None and picked[0] == FORK:
        from tui_agent.ui.tree_view import fork_at  # it builds on this module's helpers

        await fork_at(app, picked[1])
        return
    plan = picked[1] if picked is not None else None
    choice = await _ask(app, RestoreChoice.for_rewind(plan)) if plan is not None else None
    if plan is None or choice is None:
        return
    resume, conversation = app.hooks.resume, choice != CODE
    if conversation and resume is None:
        _unavailable(app, "rewind")
        return
    if conversation:
        await app.loop.rewind_conversation(plan.turn)
    if choice != CONVERSATION:
        await app.loop.restore_files(plan.turn)
    if conversation and resume is not None:
        await _reopen(app, resume)  # the reopened session shows the rewound conversation
    app.prompt_input.load_draft(typed_prompt(plan))
    app.prompt_input.focus()


def _unavailable(app: TuiAgentApp, name: str) -> None:
    app.vm.add_marker("warning", f"/{name} is not available here")


def set_approval(app: TuiAgentApp, arg: str) -> None:
    from tui_agent.vocab import APPROVAL_MODES

    current = app.vm.status.approval_mode
    if not arg:
        mode = APPROVAL_MODES[(APPROVAL_MODES.index(current) + 1) % len(APPROVAL_MODES)]
    elif arg in APPROVAL_MODES:
        mode = arg
    else:
        modes = ", ".join(APPROVAL_MODES)
        app.vm.add_marker("warning", f"approval mode must be one of {modes}")
        return
    app.loop.set_approval_mode(mode)  # the loop confirms it with a notice
    app.vm.set_approval_mode(mode)


def _pick_session(app: TuiAgentApp) -> None:
    if app.hooks.list_sessions is None or app.hooks.resume is None:
        _unavailable(app, "sessions")
        return
    app._call(_pick_and_resume(app), "/sessions")


async def _pick_and_resume(app: TuiAgentApp) -> None:
    list_sessions, resume = app.hooks.list_sessions, app.hooks.resume
    assert list_sessions is not None and resume is not None
    sessions = await list_sessions()
    if not sessions:
        app.vm.add_marker("info", "no saved sessions yet")
        return

    def chosen(session_id: str | None) -> None:
        if session_id and session_id != app.loop.info.session_id:
            app._call(_swap(app, resume(session_id)), "/resume")

    from tui_agent.ui.sessions_screen import SessionPicker

    app.push_screen(SessionPicker(sessions), callback=chosen)


async def _swap(app: TuiAgentApp, new_loop: Awaitable[LoopApi]) -> None:
    """Replace the loop (new session, resumed one, other model) and redraw from it."""
    from tui_agent.ui.long_session import open_session, refreeze  # it imports the loop's types

    loop, preloaded = await open_session(new_loop, app.vm, app.transcript)
    old = app.loop
    app._detach_loop()
    app._attach_loop(loop, preloaded)
    if old is not loop:
        await old.close()
        del old
        refreeze()
    app.vm.add_marker("info", f"session {loop.info.session_id}")


async def _switch_model(
    app: TuiAgentApp, switch: Callable[[str, str], Awaitable[LoopApi]], model: str
) -> None:
    """Reopen this session on another model: the old loop must seal its log first."""
    await _reopen(app, lambda session_id: switch(session_id, model))
    app.vm.add_marker("info", f"model: {app.loop.info.model}")


async def _reopen(app: TuiAgentApp, reopen: Callable[[str], Awaitable[LoopApi]]) -> None:
    """Close this session's loop (sealing its log) and open it again, in the same approval
    mode: the person's choice holds across the reopening."""
    session_id, mode = app.loop.info.session_id, app.vm.status.approval_mode
    if app.vm.busy:
        await app.loop.cancel(force=True)
    app._detach_loop()
    await app.loop.close()
    loop = await reopen(session_id)
    if loop.info.approval_mode != mode:
        loop.set_approval_mode(mode)
    app._attach_loop(loop)


# ------------------------------------------------------------ what they show


MCP_STATES = {
    "off": "off (enabled = false)",
    "skipped": "not started",
    "waiting": "waiting",
    "starting": "starting…",
    "ready": "up",
    "failed": "failed",
    "crashed": "crashed (restarts on the next call)",
    "disabled": "disabled",
    "login": "needs a login",
}
MCP_SOURCES = {"config": "config.toml", "workspace": ".mcp.json", "client": "ACP client"}


def mcp_text(servers: Sequence[McpServerInfo]) -> str:
    """What `/mcp` shows: each server's state, origin, command, tools and last error."""
    if not servers:
        return (
            "No MCP servers configured. Add them to the workspace's .mcp.json "
            "(Claude Code's format) or to [mcp_servers.NAME] in config.toml."
        )
    up = sum(server.state == "ready" for server in servers)
    lines = [f"MCP servers: {up} of {len(servers)} up"]
    for server in servers:
        source = MCP_SOURCES.get(server.source, server.source)
        state = MCP_STATES.get(server.state, server.state)
        lines.append(f"● {server.name}  {state}  ({source}: {server.command})")
        if server.auth:
            lines.append(f"    OAuth: {server.auth}")
        if server.tools:
            prefix = f"mcp__{server.name}__"
            names = [tool.removeprefix(prefix) for tool in server.tools]
            lines.append(f"    tools: {', '.join(names)}")
        if server.error:
            lines.append("    " + server.error.replace("\n", "\n    "))
    lines.append("/mcp reconnect NAME restarts a server; /mcp login NAME, /mcp logout NAME.")
    return "\n".join(lines)
