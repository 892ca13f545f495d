"""The configured hooks of a run and firing them: matching, the JSON input, parallel runs, logs.

`UserHooks` holds every configured hook (a project's untrusted ones too, which /hooks lists but
never runs) and each one's last run. `bind` gives one loop its `LoopHooks`, which knows the
loop's session, log and event stream: `fire(event, fields, subjects)` runs every trusted hook of
`event` whose matcher accepts one of `subjects`, in parallel (each command once, as Claude Code
does), with the JSON input Claude Code gives (`session_id`, `transcript_path`, `cwd`,
`permission_mode`, `hook_event_name` and the event's own `fields`), writes each run to the
session's event log, and says in the transcript when a hook blocks or fails.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tui_agent.context import HookRan, Record
from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop import events as ev
from tui_agent.loop.adapters.journal import Journal
from tui_agent.loop.userhooks._spec import HookEvent, HookSpec
from tui_agent.vocab import ApprovalMode

if TYPE_CHECKING:
    # Running a hook and reading its answer load with the first hook that fires: a run without
    # hooks (every one-shot of a person who has none) never needs them.
    from tui_agent.loop.userhooks._process import HookRun
    from tui_agent.loop.userhooks._verdict import Verdict

# Claude Code's names for the approval modes, as `permission_mode` gives them.
PERMISSION_MODES: dict[ApprovalMode, str] = {
    "plan": "plan",
    "ask": "default",
    "auto-edit": "acceptEdits",
    "yolo": "bypassPermissions",
}
_SHOWN = 60  # characters of a command in a transcript line


@dataclass(frozen=True)
class HookInfo:
    """One hook as /hooks shows it."""

    event: str
    matcher: str
    command: str
    source: str
    trusted: bool  # False: a project's hook the person has not trusted; it does not run
    last: str | None  # its last run, in a few words (None: it has not run)


def shown(command: str) -> str:
    line = " ".join(command.split())
    return line if len(line) <= _SHOWN else line[: _SHOWN - 1] + "…"


class UserHooks:
    def __init__(self, specs: Sequence[HookSpec], workspace: Path) -> None:
        self.specs = tuple(specs)
        self.workspace = workspace
        self._last: dict[HookSpec, HookRun] = {}

    def has(self, event: HookEvent) -> bool:
        return any(spec.event == event and spec.runs for spec in self.specs)

    def infos(self) -> tuple[HookInfo, ...]:
        return tuple(
            HookInfo(
                event=spec.event,
                matcher=spec.matcher,
                command=spec.command,
                source=spec.source,
                trusted=spec.runs,
                last=self._last[spec].summary if spec in self._last else None,
            )
            for spec in self.specs
        )

    def ran(self, run: HookRun) -> None:
        self._last[run.spec] = run

    def bind(
        self,
        session_id: str,
        transcript_path: Path,
        mode: Callable[[], ApprovalMode],
        publish: Callable[[ev.LoopEvent], None],
        journal: Journal,
    ) -> LoopHooks:
        """The hooks as the loop of `session_id` fires them: its approval `mode` (for
        `permission_mode`), its event stream and its log."""
        return LoopHooks(self, session_id, transcript_path, mode, publish, journal.write)


class LoopHooks:
    """The hooks as one loop fires them (see the module docstring)."""

    def __init__(
        self,
        hooks: UserHooks,
        session_id: str,
        transcript_path: Path,
        mode: Callable[[], ApprovalMode],
        publish: Callable[[ev.LoopEvent], None],
        write: Callable[[Record], None],
    ) -> None:
        self.hooks = hooks
        self._session_id = session_id
        self._transcript_path = transcript_path
        self._mode = mode
        self._publish = publish
        self._write = write
        self.on_close: Callable[[], Awaitable[None]] | None = None  # set by `attach`

    async def close(self) -> None:
        """The loop is closing (its log still open): a top-level loop's `SessionEnd`."""
        if self.on_close is not None:
            await self.on_close()

    @property
    def workspace(self) -> Path:
        return self.hooks.workspace

    def has(self, event: HookEvent) -> bool:
        return self.hooks.has(event)

    def notice(self, level: Literal["info", "warning"], text: str) -> None:
        self._publish(ev.Notice(level=level, text=text))

    async def fire(
        self, event: HookEvent, fields: Mapping[str, Any], subjects: tuple[str, ...] = ()
    ) -> Verdict:
        from tui_agent.loop.userhooks._process import run_command
        from tui_agent.loop.userhooks._verdict import Verdict

        chosen: dict[str, HookSpec] = {}
        for spec in self.hooks.specs:
            if spec.event == event and spec.runs and spec.matches(subjects):
                chosen.setdefault(spec.command, spec)  # the same command runs once
        verdict = Verdict()
        if not chosen:
            return verdict
        payload = {
            "session_id": self._session_id,
            "transcript_path": str(self._transcript_path),
            "cwd": str(self.workspace),
            "permission_mode": PERMISSION_MODES[self._mode()],
            "hook_event_name": event,
            **fields,
        }
        data = json.dumps(payload).encode() + b"\n"  # a line: `read` in a shell hook takes it
        env = {**os.environ, "CLAUDE_PROJECT_DIR": str(self.workspace)}
        runs = await asyncio.gather(
            *(run_command(spec, data, self.workspace, env) for spec in chosen.values())
        )
        for run in runs:
            verdict.merge(self._account(run))
        for message in verdict.messages:
            self._publish(ev.Notice(level="info", text=f"hook {event}: {message}"))
        return verdict

    def _account(self, run: HookRun) -> Verdict:
        """Log one run, say in the transcript if it failed or blocked, and read its answer."""
        from tui_agent.loop.userhooks._verdict import failure, read_run

        self.hooks.ran(run)
        spec = run.spec
        problem = failure(run)
        self._write(
            HookRan(
                event=spec.event,
                command=spec.command,
                exit_code=run.exit_code,
                duration_s=round(run.duration_s, 3),
                outcome=problem or run.summary,
            )
        )
        where = f"hook {spec.event} `{shown(spec.command)}`"
        if problem is not None:
            self._publish(ev.Notice(level="warning", text=f"{where} failed: {problem}"))
        verdict = read_run(run)
        if verdict.block or verdict.permission == "deny":
            why = verdict.reason if verdict.block else verdict.permission_reason
            self._publish(ev.Notice(level="info", text=f"{where} blocked: {why.strip()}"))
        if verdict.stop:
            self._publish(
                ev.Notice(level="info", text=f"{where} stopped the turn: {verdict.stop_reason}")
            )
        return verdict
