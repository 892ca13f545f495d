"""What hook runs decide, read as Claude Code defines it, and several runs' answers merged.

Exit 0: go on; stdout that is a JSON object is read for `continue` / `stopReason`,
`systemMessage`, `decision` / `reason` and `hookSpecificOutput` (`permissionDecision`,
`permissionDecisionReason`, `additionalContext`); other stdout of `UserPromptSubmit` and
`SessionStart` is context for the model. Exit 2: block, with stderr as the reason. Any other
code, a timeout, or a command that cannot start: a warning for the person, and the event goes
on. `suppressOutput` needs nothing here: a hook's stdout is never put in the transcript.
"""

from __future__ import annotations

import json
from dataclasses import field
from typing import Any, Literal

from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop.userhooks._process import HookRun

Permission = Literal["allow", "ask", "deny"]
_PRECEDENCE: dict[Permission | None, int] = {None: 0, "allow": 1, "ask": 2, "deny": 3}
_CONTEXT_EVENTS = frozenset({"UserPromptSubmit", "SessionStart"})
_PERMISSIONS: dict[str, Permission] = {"allow": "allow", "ask": "ask", "deny": "deny"}
_LEGACY = {"approve": "allow", "block": "deny"}  # PreToolUse's older `decision` values


@dataclass
class Verdict:
    """The merged answer of every hook that ran for one event."""

    block: bool = False
    reasons: list[str] = field(default_factory=list)  # why it blocks (stderr, `reason`)
    permission: Permission | None = None  # PreToolUse's decision; deny > ask > allow
    permission_reason: str = ""
    context: list[str] = field(default_factory=list)  # for the model
    stop: bool = False  # `"continue": false`: the turn ends
    stop_reason: str = ""
    messages: list[str] = field(default_factory=list)  # for the person

    @property
    def reason(self) -> str:
        return "\n".join(r for r in self.reasons if r) or "blocked by a hook"

    def merge(self, other: Verdict) -> None:
        self.block = self.block or other.block
        self.reasons += other.reasons
        if _PRECEDENCE[other.permission] > _PRECEDENCE[self.permission]:
            self.permission, self.permission_reason = other.permission, other.permission_reason
        self.context += other.context
        if other.stop and not self.stop:
            self.stop, self.stop_reason = True, other.stop_reason
        self.messages += other.messages


def read_run(run: HookRun) -> Verdict:
    verdict = Verdict()
    event = run.spec.event
    if run.exit_code == 2:
        verdict.block = True
        verdict.reasons.append(run.stderr.strip())
        return verdict
    if run.exit_code != 0:
        return verdict  # a failure: the caller warns the person about it
    data = _json_object(run.stdout)
    if data is None:
        if event in _CONTEXT_EVENTS and run.stdout.strip():
            verdict.context.append(run.stdout.strip())
        return verdict
    if data.get("continue") is False:
        verdict.stop = True
        verdict.stop_reason = str(data.get("stopReason") or "")
    if isinstance(data.get("systemMessage"), str):
        verdict.messages.append(data["systemMessage"])
    decision = data.get("decision")
    reason = str(data.get("reason") or "")
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    if isinstance(specific.get("additionalContext"), str):
        verdict.context.append(specific["additionalContext"])
    if event == "PreToolUse":
        said = specific.get("permissionDecision") or _LEGACY.get(str(decision))
        permission = _PERMISSIONS.get(str(said))
        if permission is not None:
            verdict.permission = permission
            verdict.permission_reason = str(specific.get("permissionDecisionReason") or reason)
    elif decision == "block":
        verdict.block = True
        verdict.reasons.append(reason)
    return verdict


def failure(run: HookRun) -> str | None:
    """What went wrong with a run, for the person (None: it did not fail)."""
    if run.error is not None or run.timed_out:
        return run.summary
    if run.exit_code in (0, 2):
        return None
    detail = run.stderr.strip().splitlines()
    return f"{run.summary}" + (f": {detail[0]}" if detail else "")


def _json_object(text: str) -> dict[str, Any] | None:
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
