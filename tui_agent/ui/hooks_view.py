"""What `/hooks` shows: every configured hook command, where it comes from, whether it runs
(a project's hook runs only once trusted) and how its last run went."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_agent.loop.userhooks import HookInfo
    from tui_agent.ui.app import TuiAgentApp

NO_HOOKS = (
    'No hooks configured. Add [[hooks.EVENT]] tables to config.toml, or a "hooks" object in '
    "Claude Code's format to ~/.claude/settings.json, .claude/settings.json or "
    ".tui-agent/settings.json (see the README's Hooks section)."
)


def hooks_text(hooks: Sequence[HookInfo]) -> str:
    if not hooks:
        return NO_HOOKS
    running = sum(hook.trusted for hook in hooks)
    lines = [f"Hooks: {running} of {len(hooks)} in force"]
    for event in dict.fromkeys(hook.event for hook in hooks):
        lines.append(f"{event}")
        for hook in hooks:
            if hook.event != event:
                continue
            state = "" if hook.trusted else "  NOT TRUSTED (does not run)"
            matcher = f"[{hook.matcher}] " if hook.matcher else ""
            lines.append(f"  ● {matcher}{hook.command}{state}")
            last = hook.last or "not run yet"
            lines.append(f"      from {hook.source} · last: {last}")
    return "\n".join(lines)


def show_hooks(app: TuiAgentApp, arg: str) -> None:
    app.vm.add_marker("info", hooks_text(app.loop.hooks()))
