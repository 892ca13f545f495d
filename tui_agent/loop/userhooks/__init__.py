"""The person's own hook commands, Claude Code compatible: what they are, running them, and
fastening them to a loop (`build_loop` takes a `UserHooks`; `session` reads the files).

`_spec` a hook and its matcher, `_claude` tool calls in Claude Code's words, `_process` one
command's run (bounded, timed, killed), `_verdict` what runs decide, `_runtime` firing an
event, `_wiring` the loop's slots and the executor's `CallHooks`.
"""

from tui_agent.loop.userhooks._runtime import HookInfo, LoopHooks, UserHooks
from tui_agent.loop.userhooks._spec import (
    DEFAULT_TIMEOUT_S,
    HOOK_EVENTS,
    HookEvent,
    HookSpec,
    matcher_problem,
)
from tui_agent.loop.userhooks._wiring import ToolHookGate, attach

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "HOOK_EVENTS",
    "HookEvent",
    "HookInfo",
    "HookSpec",
    "LoopHooks",
    "ToolHookGate",
    "UserHooks",
    "attach",
    "matcher_problem",
]
