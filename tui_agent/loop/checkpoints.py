"""Checkpoints: the prior content of every file a tool writes, and putting it back.

Before `write_file` or `edit_file` runs, `Checkpoints.before` copies what the file holds into the
session's `checkpoints/` folder (content-addressed by SHA-256, so a file kept twice is stored
once); afterwards `after` logs a `file.checkpoint` record naming the blob it kept (or that the
file did not exist) and the digest of what the call left. The records sit in the log inside the
turn that made them, so the log alone says what each prompt changed; no git is needed.

`Timeline` reads a log back: the turns still in the conversation (a `rewind` removes some), what
the files were at the start of each, the shell calls since (whose effects cannot be put back),
and which files someone else changed after the agent last wrote them. Restoring to "before turn
k" gives each file the content it had when turn k began: the `before` of the first checkpoint of
that file logged after turn k began. A restore is itself checkpointed, so later restores see it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.context import (
    EventLog,
    FileCheckpoint,
    FilesRestored,
    Prompt,
    Record,
    Rewind,
    ToolCallStarted,
    TurnBegin,
    read_log_async,
)
from tui_agent.loop.api import RestorePlan
from tui_agent.tools import Workspace, WorkspaceError
from tui_agent.vocab import PromptDraft

RESTORE_CALL = "restore"  # the call id of the checkpoints a restore itself writes


@dataclass
class _Turn:
    number: int
    prompt: str = ""
    draft: PromptDraft | None = None


@dataclass
class Timeline:
    """The facts of a session's log that /undo and /rewind need."""

    turns: list[_Turn] = field(default_factory=list)  # in the conversation, oldest first
    begins: list[int] = field(default_factory=list)  # log position of every turn, by number
    checkpoints: list[tuple[int, int, FileCheckpoint]] = field(default_factory=list)
    shell: list[tuple[int, str]] = field(default_factory=list)  # (turn number, command)
    undone_from: list[tuple[int, int]] = field(default_factory=list)  # (position, turn)

    @classmethod
    def of(cls, records: Sequence[Record]) -> Timeline:
        timeline = cls()
        number = -1
        for at, record in enumerate(records):
            match record:
                case TurnBegin():
                    number += 1
                    timeline.begins.append(at)
                    timeline.turns.append(_Turn(number))
                case Prompt():
                    if timeline.turns and not timeline.turns[-1].prompt:
                        timeline.turns[-1].prompt = record.message.text
                        timeline.turns[-1].draft = record.draft
                case Rewind():
                    timeline.turns = [t for t in timeline.turns if t.number < record.turn]
                case FileCheckpoint():
                    timeline.checkpoints.append((at, number, record))
                case FilesRestored():
                    timeline.undone_from.append((at, record.turn))
                case ToolCallStarted() if record.call.name == "shell":
                    timeline.shell.append((number, _command(record.call.arguments)))
                case _:
                    pass
        return timeline

    def undo_target(self) -> int | None:
        """The last turn whose file changes are not undone yet."""
        for at, number, checkpoint in reversed(self.checkpoints):
            if checkpoint.call_id == RESTORE_CALL:
                continue
            undone = any(later > at and turn <= number for later, turn in self.undone_from)
            if not undone:
                return number
        return None

    def targets(self, turn: int) -> dict[str, str | None]:
        """Each file changed since turn `turn` began, with the blob it had then (None: none)."""
        start = self.begins[turn] if 0 <= turn < len(self.begins) else len(self.begins)
        found: dict[str, str | None] = {}
        for at, _, checkpoint in self.checkpoints:
            if at > start and checkpoint.path not in found:
                found[checkpoint.path] = checkpoint.before
        return found

    def left_by_agent(self) -> dict[str, str | None]:
        """The digest each file had when the agent (or a restore) last wrote it."""
        return {checkpoint.path: checkpoint.after for _, _, checkpoint in self.checkpoints}

    def prompt_of(self, turn: int) -> tuple[str, PromptDraft | None]:
        """The text that opened turn `turn`, and what the person typed for it (if recorded)."""
        found = next((t for t in self.turns if t.number == turn), _Turn(turn))
        return found.prompt, found.draft

    def shell_since(self, turn: int) -> tuple[str, ...]:
        return tuple(command for number, command in self.shell if number >= turn)


class Checkpoints:
    """Implements `tools.Checkpointer` for a session; also plans and performs restores."""

    def __init__(self, folder: Path, workspace: Workspace, log: EventLog) -> None:
        self.folder = folder
        self.workspace = workspace
        self.log = log
        self._kept: dict[tuple[str, str], str | None] = {}  # (call id, path) -> blob

    # -- the executor's hook -----------------------------------------------------------------
    async def before(self, call_id: str, paths: Sequence[str]) -> None:
        for path in paths:
            shown = self._shown(path)
            if shown is not None:
                self._kept[(call_id, shown)] = await asyncio.to_thread(self._keep, shown)

    async def after(self, call_id: str, paths: Sequence[str]) -> None:
        for path in paths:
            shown = self._shown(path)
            if shown is None or (call_id, shown) not in self._kept:
                continue
            before = self._kept.pop((call_id, shown))
            after = await asyncio.to_thread(self._digest, shown)
            if after != before:  # nothing changed (a refused edit): nothing to undo
                self.log.write(
                    FileCheckpoint(call_id=call_id, path=shown, before=before, after=after)
                )

    # -- plans and restores ------------------------------------------------------------------
    async def timeline(self) -> Timeline:
        await self.log.drain()
        return Timeline.of(await read_log_async(self.log.path))

    async def plan(self, timeline: Timeline, turn: int) -> RestorePlan:
        targets = timeline.targets(turn)
        left = timeline.left_by_agent()
        files, outside = [], []
        for path, blob in targets.items():
            current = await asyncio.to_thread(self._digest, path)
            if current != blob:
                files.append(path)
                if current != left.get(path):
                    outside.append(path)
        prompt, draft = timeline.prompt_of(turn)
        return RestorePlan(
            turn, prompt, draft, tuple(files), timeline.shell_since(turn), tuple(outside)
        )

    async def restore(self, turn: int) -> tuple[str, ...]:
        """Put back every file changed since turn `turn` began; returns the files restored."""
        timeline = await self.timeline()
        plan = await self.plan(timeline, turn)
        targets = timeline.targets(turn)
        for path in plan.files:
            before = await asyncio.to_thread(self._keep, path)
            await asyncio.to_thread(self._put_back, path, targets[path])
            self.log.write(
                FileCheckpoint(call_id=RESTORE_CALL, path=path, before=before, after=targets[path])
            )
        self.log.write(FilesRestored(turn=turn, paths=plan.files))
        await self.log.drain()
        return plan.files

    async def rewind(self, turn: int) -> None:
        """The conversation goes back to just before turn `turn` (the log keeps everything)."""
        self.log.write(Rewind(turn=turn))
        await self.log.drain()

    # -- files -------------------------------------------------------------------------------
    def _shown(self, path: str) -> str | None:
        try:
            return self.workspace.display(self.workspace.resolve(path, write=True))
        except WorkspaceError:
            return None  # the tool refuses it itself

    def _real(self, shown: str) -> Path:
        return self.workspace.resolve(shown, write=True)

    def _keep(self, shown: str) -> str | None:
        """Copy the file into the checkpoint folder; its digest names the copy."""
        try:
            data = self._real(shown).read_bytes()
        except FileNotFoundError:
            return None
        digest = hashlib.sha256(data).hexdigest()
        blob = self.folder / digest
        if not blob.exists():
            self.folder.mkdir(parents=True, exist_ok=True)
            _write_atomically(blob, data)
        return digest

    def _digest(self, shown: str) -> str | None:
        try:
            return hashlib.sha256(self._real(shown).read_bytes()).hexdigest()
        except FileNotFoundError:
            return None

    def _put_back(self, shown: str, blob: str | None) -> None:
        real = self._real(shown)
        if blob is None:
            real.unlink(missing_ok=True)
            return
        real.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(real, (self.folder / blob).read_bytes())


def _write_atomically(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.tui-agent-tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def _command(arguments: str) -> str:
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    command = value.get("command") if isinstance(value, dict) else None
    return command if isinstance(command, str) else arguments


__all__ = ["RESTORE_CALL", "Checkpoints", "Timeline"]
