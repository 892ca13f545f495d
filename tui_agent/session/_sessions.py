"""Sessions on disk: `sessions/<id>/` with `events.jsonl`, `spill/` and a small `session.json`.

A session id sorts by creation time (`20261129-220501-ab12cd`, UTC, then random). Each
workspace has an index file (under `workspaces/`, named by a hash of the workspace path) that
lists the sessions started there, one JSON line each, appended, so two processes starting
sessions at once never overwrite each other. `latest_for` picks the most recently active one
(by its log's modification time), which is what `--continue` resumes. Listing reads only the
first prompt and counts turn starts; it never parses whole logs.

These operations are small and synchronous (a directory, a few hundred bytes); they run at
start-up or on an explicit user command, never inside a turn.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import time
from pathlib import Path

from tui_agent.lazy_dataclass import dataclass
from tui_agent.session._paths import AppPaths

EVENTS_FILE = "events.jsonl"
SPILL_DIR = "spill"
CHECKPOINT_DIR = "checkpoints"
META_FILE = "session.json"
TITLE_CHARS = 80

# Ids are path components: refuse anything that could leave the sessions directory.
_VALID_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_TURN_BEGIN = b'{"type":"turn.begin"'
_PROMPT = b'{"type":"prompt"'


@dataclass(frozen=True)
class Session:
    session_id: str
    dir: Path
    workspace: Path
    created: float

    @property
    def events_path(self) -> Path:
        return self.dir / EVENTS_FILE

    @property
    def spill_dir(self) -> Path:
        return self.dir / SPILL_DIR

    @property
    def checkpoint_dir(self) -> Path:
        """Prior contents of the files tools changed (see `loop.checkpoints`)."""
        return self.dir / CHECKPOINT_DIR

    @classmethod
    def create(
        cls, workspace: Path | str, *, paths: AppPaths | None = None, now: float | None = None
    ) -> Session:
        paths = paths or AppPaths.from_env()
        root = Path(workspace).resolve()
        created = time.time() if now is None else now
        paths.sessions_dir.mkdir(parents=True, exist_ok=True)
        while True:
            session_id = new_session_id(created)
            directory = paths.sessions_dir / session_id
            try:
                directory.mkdir()
                break
            except FileExistsError:
                continue  # same second, same random suffix: draw again
        (directory / SPILL_DIR).mkdir()
        meta = {"session_id": session_id, "workspace": str(root), "created": created}
        (directory / META_FILE).write_text(json.dumps(meta) + "\n", encoding="utf-8")
        index = _index_path(paths, root)
        index.parent.mkdir(parents=True, exist_ok=True)
        with index.open("a", encoding="utf-8") as file:
            file.write(json.dumps(meta) + "\n")
        return cls(session_id=session_id, dir=directory, workspace=root, created=created)

    def fork(self, *, paths: AppPaths | None = None) -> Session:
        """A new session of the same workspace that starts with a copy of this one's log.

        Spilled outputs stay in this session's folder; the copy's history still names them."""
        copy = Session.create(self.workspace, paths=paths)
        try:
            data = self.events_path.read_bytes()
        except FileNotFoundError:
            return copy
        cut = data.rfind(b"\n") + 1  # a torn last line (the other writer is mid-record) stays
        copy.events_path.write_bytes(data[:cut])
        return copy

    @classmethod
    def open(cls, session_id: str, *, paths: AppPaths | None = None) -> Session | None:
        """The session with this id, or None when there is none (or the id is not valid)."""
        if not _VALID_ID.match(session_id):
            return None
        paths = paths or AppPaths.from_env()
        directory = paths.sessions_dir / session_id
        if not directory.is_dir():
            return None
        try:
            meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
            workspace = Path(str(meta["workspace"]))
            created = float(meta["created"])
        except (OSError, ValueError, KeyError, TypeError):
            # A directory made by hand or by an older version: still resumable by id.
            workspace = Path.cwd()
            created = directory.stat().st_mtime
        return cls(session_id=session_id, dir=directory, workspace=workspace, created=created)

    @classmethod
    def latest_for(cls, workspace: Path | str, *, paths: AppPaths | None = None) -> Session | None:
        """The most recently active session of `workspace` (what `--continue` resumes)."""
        found = _sessions_of(Path(workspace).resolve(), paths or AppPaths.from_env())
        if not found:
            return None
        return max(found, key=lambda session: (session.last_active(), session.session_id))

    @classmethod
    def list_for(cls, workspace: Path | str, *, paths: AppPaths | None = None) -> list[SessionInfo]:
        return list_sessions(workspace, paths=paths)

    def last_active(self) -> float:
        try:
            return self.events_path.stat().st_mtime
        except FileNotFoundError:
            return self.created

    def info(self) -> SessionInfo:
        title, turns = _scan_log(self.events_path)
        return SessionInfo(
            session_id=self.session_id,
            workspace=self.workspace,
            created=self.created,
            last_active=self.last_active(),
            title=title,
            turns=turns,
        )


@dataclass(frozen=True)
class SessionInfo:
    session_id: str
    workspace: Path
    created: float
    last_active: float
    title: str  # the first line of the first prompt, or "" before any
    turns: int


def list_sessions(workspace: Path | str, *, paths: AppPaths | None = None) -> list[SessionInfo]:
    """The sessions of `workspace`, most recently active first."""
    found = _sessions_of(Path(workspace).resolve(), paths or AppPaths.from_env())
    infos = [session.info() for session in found]
    return sorted(infos, key=lambda info: (info.last_active, info.session_id), reverse=True)


def new_session_id(now: float | None = None) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if now is None else now))
    return f"{stamp}-{secrets.token_hex(3)}"


def _index_path(paths: AppPaths, workspace: Path) -> Path:
    digest = hashlib.sha256(str(workspace).encode()).hexdigest()[:16]
    return paths.index_dir / f"{digest}.jsonl"


def _sessions_of(workspace: Path, paths: AppPaths) -> list[Session]:
    try:
        lines = _index_path(paths, workspace).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    sessions: dict[str, Session] = {}
    for line in lines:
        try:
            record = json.loads(line)
            session_id = str(record["session_id"])
            same = Path(str(record["workspace"])) == workspace  # a hash collision is not ours
        except (ValueError, KeyError, TypeError):
            continue  # a torn line from a crash mid-append
        session = Session.open(session_id, paths=paths) if same else None
        if session is not None:
            sessions[session_id] = session
    return list(sessions.values())


def _scan_log(path: Path) -> tuple[str, int]:
    """(title, turns) from the log, reading whole records only for the first prompt."""
    title = ""
    turns = 0
    try:
        with path.open("rb") as file:
            for line in file:
                if line.startswith(_TURN_BEGIN):
                    turns += 1
                elif not title and line.startswith(_PROMPT):
                    title = _prompt_title(line)
    except OSError:
        pass  # missing, a folder, unreadable: listed without a title; opening it says why
    return title, turns


def _prompt_title(line: bytes) -> str:
    try:
        record = json.loads(line)
        parts = record["message"]["content"]
        text = "".join(part.get("text", "") for part in parts if part.get("type") == "text")
    except (ValueError, KeyError, TypeError, AttributeError):
        return ""
    first = next((row.strip() for row in text.splitlines() if row.strip()), "")
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1] + "…"
