"""What one configured hook is: its event, its matcher, its command, where it came from.

The nine events are Claude Code's. A matcher is matched against the event's subject: the tool's
name for the tool events (Claude Code's name or ours, so `Bash|Edit` and `shell|edit_file`
both work), the source for `SessionStart` (startup, resume, clear, compact), the trigger for
`PreCompact` (manual, auto), the kind for `Notification`, the reason for `SessionEnd`. An empty
matcher or `*` matches everything; otherwise it is a regular expression that must match the
whole subject (Claude Code's simple `Write` is the regex `Write`).
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import Literal, get_args

from tui_agent.lazy_dataclass import dataclass

HookEvent = Literal[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "Notification",
    "SessionEnd",
]
HOOK_EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)
DEFAULT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class HookSpec:
    """One hook command. `project`: it came with the repository, so it runs only once trusted
    (`trusted` says whether it is)."""

    event: HookEvent
    command: str
    matcher: str = ""
    timeout_s: float = DEFAULT_TIMEOUT_S
    source: str = "config.toml"  # the file it was read from, as the person knows it
    project: bool = False
    trusted: bool = True
    _pattern: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.matcher not in ("", "*"):
            # Checked by the loader (`matcher_problem`), so this never raises for a loaded hook.
            object.__setattr__(self, "_pattern", re.compile(self.matcher))

    def matches(self, subjects: tuple[str, ...]) -> bool:
        """Whether the hook fires for a subject known by any of `subjects` (no subjects: the
        event has none, and every hook of it fires)."""
        if self._pattern is None or not subjects:
            return True
        return any(self._pattern.fullmatch(subject) for subject in subjects)

    @property
    def runs(self) -> bool:
        return self.trusted or not self.project


def matcher_problem(matcher: str) -> str | None:
    """Why `matcher` cannot be used (None: it can)."""
    if matcher in ("", "*"):
        return None
    try:
        re.compile(matcher)
    except re.error as exc:
        return f"matcher {matcher!r} is not a regular expression: {exc}"
    return None
