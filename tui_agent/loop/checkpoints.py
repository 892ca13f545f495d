"""Checkpoints: the prior content of every file a tool writes, and putting it back.

Before `write_file` or `edit_file` runs, `Checkpoints.before` copies what the file holds into the
session's `checkpoints/` folder (content-addressed by SHA-256, so a file kept twice is stored
once); afterwards `after` logs a `file.checkpoint` record naming the blob it kept (or that the
file did not exist) and the digest of what the call left. The records sit in the log inside the
turn that made them, so the log alone says what each prompt changed; no git is needed.

`Timeline` reads a log back: the turns still in the conversation (a `rewind` removes some, a
`branch.switch` puts those of another branch in their place), what
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
import re
import stat
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path

from tui_agent.context import (
    RESTORE_CALL,
    Branches,
    BranchSwitch,
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
from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop.api import RestorePlan
from tui_agent.loop.journal import LogJournal
from tui_agent.tools import Workspace, WorkspaceError, save_file
from tui_agent.vocab import PromptDraft


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
        every: list[_Turn] = []
        branches: Branches[None] = Branches()
        number = -1
        for at, record in enumerate(records):
            match record:
                case TurnBegin():
                    number = branches.begin(None)
                    timeline.begins.append(at)
                    every.append(_Turn(number))
                case Prompt():
                    if every and not every[-1].prompt:
                        every[-1].prompt = record.message.text
                        every[-1].draft = record.draft
                case Rewind():
                    branches.rewind(record.turn, lambda: None)
                case BranchSwitch():
                    branches.switch(record.turn, lambda: None)
                case FileCheckpoint():
                    timeline.checkpoints.append((at, number, record))
                case FilesRestored():
                    timeline.undone_from.append((at, record.turn))
                case ToolCallStarted() if record.call.name == "shell":
                    timeline.shell.append((number, _command(record.call.arguments)))
                case _:
                    pass
        timeline.turns = [every[turn] for turn in branches.path()]
        return timeline

    def undo_target(self) -> int | None:
        """The last turn of this branch whose file changes are not undone yet."""
        on_branch = {turn.number for turn in self.turns}
        for at, number, checkpoint in reversed(self.checkpoints):
            if checkpoint.call_id == RESTORE_CALL or number not in on_branch:
                continue
            undone = any(later > at and turn <= number for later, turn in self.undone_from)
            if not undone:
                return number
        return None

    def targets(self, turn: int) -> dict[str, FileCheckpoint]:
        """Each file changed since turn `turn` began, with its first checkpoint since: the
        blob it had then (None: none) and its permission bits."""
        start = self.begins[turn] if 0 <= turn < len(self.begins) else len(self.begins)
        found: dict[str, FileCheckpoint] = {}
        for at, _, checkpoint in self.checkpoints:
            if at > start and checkpoint.path not in found:
                found[checkpoint.path] = checkpoint
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


class RestoreRefused(Exception):
    """A restore that would read or write what it must not; nothing was restored."""


@dataclass(frozen=True)
class _Kept:
    blob: str  # the SHA-256 of the content, which names its copy in the checkpoint folder
    mode: int  # the permission bits the file had


class Checkpoints:
    """Implements `tools.Checkpointer` for a session; also plans and performs restores.

    Workspace files are read and written the way the file tools do it (`Workspace.open_file`,
    `save_file`): from the root's descriptor, never through a link, never blocking on a FIFO,
    written atomically under a fresh temporary name with their permission bits kept. Blobs are
    read the same way inside the checkpoint folder, and only under a name of the shape the
    folder uses and when their content still hashes to it: the log is data, not orders."""

    def __init__(self, folder: Path, workspace: Workspace, log: EventLog) -> None:
        self.folder = folder
        self.workspace = workspace
        self.log = log  # read back for plans; written only through the journal
        self._journal = LogJournal(log)
        self._store = Workspace(folder)
        self._kept: dict[tuple[str, str], _Kept | None] = {}  # (call id, path) -> copy

    # -- the executor's hook -----------------------------------------------------------------
    async def before(self, call_id: str, paths: Sequence[str]) -> None:
        """Keeps each file; a file the workspace refuses to open (a FIFO, a device, a link
        swapped in) fails the call before the tool reads or writes anything."""
        for path in paths:
            shown = self._shown(path)
            if shown is not None:
                self._kept[(call_id, shown)] = await asyncio.to_thread(self._keep, shown)

    async def after(self, call_id: str, paths: Sequence[str]) -> None:
        for path in paths:
            shown = self._shown(path)
            if shown is None or (call_id, shown) not in self._kept:
                continue
            kept = self._kept.pop((call_id, shown))
            after = await asyncio.to_thread(self._digest, shown)
            if after != _blob(kept):  # nothing changed (a refused edit): nothing to undo
                self._journal.write(_checkpoint(call_id, shown, kept, after))

    # -- plans and restores ------------------------------------------------------------------
    async def timeline(self) -> Timeline:
        return Timeline.of(await self.records())

    async def records(self) -> list[Record]:
        """The session's log as written so far."""
        await self.log.drain()
        return await read_log_async(self.log.path)

    async def plan(self, timeline: Timeline, turn: int) -> RestorePlan:
        targets = timeline.targets(turn)
        left = timeline.left_by_agent()
        files, outside = [], []
        for path, checkpoint in targets.items():
            try:
                current = await asyncio.to_thread(self._digest, path)
            except WorkspaceError:  # not a file the agent could have left: restoring says why
                files.append(path)
                outside.append(path)
                continue
            if current != checkpoint.before:
                files.append(path)
                if current != left.get(path):
                    outside.append(path)
        prompt, draft = timeline.prompt_of(turn)
        return RestorePlan(
            turn, prompt, draft, tuple(files), timeline.shell_since(turn), tuple(outside)
        )

    async def restore(self, turn: int) -> FilesRestored:
        """Put back every file changed since turn `turn` began; returns the record that says
        which files were restored (the transcript's notice is built from it).
        Every file and blob is checked first: if one is refused, nothing is restored."""
        timeline = await self.timeline()
        plan = await self.plan(timeline, turn)
        targets = timeline.targets(turn)
        await self.put_back([targets[path] for path in plan.files])
        restored = FilesRestored(turn=turn, paths=plan.files)
        await self.record(restored)
        return restored

    async def put_back(
        self, targets: Sequence[FileCheckpoint], *, opening: Record | None = None
    ) -> None:
        """Give each target's file the content its `before` names (None: no such file), with
        the permission bits of its `mode`; each write is itself checkpointed. Every file and
        blob is checked first: if one is refused, nothing is written. `opening` is logged once
        the checks pass, before the first write."""
        refusals = await asyncio.to_thread(self._check, targets)
        if refusals:
            raise RestoreRefused("nothing was restored: " + "; ".join(refusals))
        if opening is not None:
            self._journal.write(opening)
        for target in targets:
            kept = await asyncio.to_thread(self._keep, target.path)
            await asyncio.to_thread(self._put_back, target)
            self._journal.write(_checkpoint(RESTORE_CALL, target.path, kept, target.before))

    async def rewind(self, turn: int) -> None:
        """The conversation goes back to just before turn `turn` (the log keeps everything)."""
        await self.record(Rewind(turn=turn))

    async def record(self, record: Record) -> None:
        """Log `record` and wait until it is written."""
        self._journal.write(record)
        await self.log.drain()

    async def digest(self, path: str) -> str | None:
        """The SHA-256 of a workspace file now (None: no such file); `WorkspaceError` when it
        is not a file the agent may read."""
        return await asyncio.to_thread(self._digest, path)

    def kept(self, blob: str) -> bool:
        """Whether the checkpoint folder holds content `blob` (checked again on restoring)."""
        return bool(_BLOB_NAME.fullmatch(blob)) and (self.folder / blob).is_file()

    # -- files -------------------------------------------------------------------------------
    def _shown(self, path: str) -> str | None:
        try:
            return self.workspace.display(self.workspace.resolve(path, write=True))
        except WorkspaceError:
            return None  # the tool refuses it itself

    def _real(self, shown: str) -> Path:
        return self.workspace.resolve(shown, write=True)

    def _read(self, shown: str) -> tuple[bytes, int] | None:
        """A workspace file's content and permission bits; None when there is no such file."""
        try:
            fd = self.workspace.open_file(self._real(shown), shown)
        except (FileNotFoundError, NotADirectoryError):
            return None
        with open(fd, "rb") as handle:
            return handle.read(), stat.S_IMODE(os.fstat(handle.fileno()).st_mode)

    def _keep(self, shown: str) -> _Kept | None:
        """Copy the file into the checkpoint folder; its digest names the copy."""
        found = self._read(shown)
        if found is None:
            return None
        data, mode = found
        digest = hashlib.sha256(data).hexdigest()
        blob = self._store.root / digest
        try:
            kept = stat.S_ISREG(os.lstat(blob).st_mode)  # its content is checked on restoring
        except FileNotFoundError:
            kept = False
        if not kept:
            self.folder.mkdir(parents=True, exist_ok=True)
            save_file(self._store, blob, data)
        return _Kept(digest, mode)

    def _digest(self, shown: str) -> str | None:
        found = self._read(shown)
        return None if found is None else hashlib.sha256(found[0]).hexdigest()

    def _load(self, blob: str) -> bytes:
        """The content kept as `blob`, if `blob` is a checkpoint name and still holds it."""
        if not _BLOB_NAME.fullmatch(blob):
            raise RestoreRefused(f'the log names "{blob}" as a checkpoint, which is no checkpoint')
        shown = f"checkpoint {blob[:12]}"
        try:
            fd = self._store.open_file(self._store.root / blob, shown)
        except FileNotFoundError:
            raise RestoreRefused(f"{shown} is missing") from None
        except WorkspaceError as error:
            raise RestoreRefused(str(error)) from None
        with open(fd, "rb") as handle:
            data = handle.read()
        if hashlib.sha256(data).hexdigest() != blob:
            raise RestoreRefused(f"{shown} was changed since it was kept")
        return data

    def _check(self, checkpoints: Sequence[FileCheckpoint]) -> list[str]:
        """Why each of these restores must not happen (empty: all may)."""
        refusals = []
        for checkpoint in checkpoints:
            try:
                self._digest(checkpoint.path)  # the file is one we may read, write and keep
                if checkpoint.before is not None:
                    self._load(checkpoint.before)
            except (WorkspaceError, RestoreRefused) as error:
                refusals.append(f"{checkpoint.path}: {error}")
        return refusals

    def _put_back(self, checkpoint: FileCheckpoint) -> None:
        real = self._real(checkpoint.path)
        if checkpoint.before is not None:
            data = self._load(checkpoint.before)
            save_file(self.workspace, real, data, checkpoint.mode)
            return
        try:
            folder = self.workspace.open_dir(real.parent)
        except FileNotFoundError:
            return
        try:
            os.unlink(real.name, dir_fd=folder)  # removes a link itself, never what it names
        except FileNotFoundError:
            pass
        finally:
            os.close(folder)


_BLOB_NAME = re.compile(r"[0-9a-f]{64}")


def _blob(kept: _Kept | None) -> str | None:
    return None if kept is None else kept.blob


def _checkpoint(call_id: str, path: str, kept: _Kept | None, after: str | None) -> FileCheckpoint:
    mode = None if kept is None else kept.mode
    return FileCheckpoint(call_id=call_id, path=path, before=_blob(kept), after=after, mode=mode)


def _command(arguments: str) -> str:
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    command = value.get("command") if isinstance(value, dict) else None
    return command if isinstance(command, str) else arguments


__all__ = ["Checkpoints", "RestoreRefused", "Timeline"]
