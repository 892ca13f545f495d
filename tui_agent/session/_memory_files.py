"""Memory files: the `AGENTS.md` / `CLAUDE.md` instructions people keep at several levels.

At start (`load_instructions`), in this order, each marked with its path: the person's own files
(`AGENTS.md` beside `config.toml`, then `~/.claude/CLAUDE.md`), then every `AGENTS.md`,
`CLAUDE.md` and `CLAUDE.local.md` from the repository's root (the git root, else the
workspace) down to the workspace. A file in a folder below the workspace joins later, the first
time the agent reads or edits a file there (`NestedMemory`).

A line's `@path` words import that file (after the one that names it), relative to the file
that names it (`~/` for the home folder): at most `MAX_IMPORT_DEPTH` deep, never twice (a cycle
stops), and only from inside the repository or the person's home; a refused import is a note in
the text the model reads. A `@word` that names no file is left alone (`@decorator`, a handle).
Each file is cut at `MAX_FILE_CHARS` and all of them together at `MAX_TOTAL_CHARS`, with a
note saying so, so that memory cannot fill the context window.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Iterable
from dataclasses import field
from pathlib import Path

from tui_agent.lazy_dataclass import dataclass
from tui_agent.session._instructions import ProjectInstructions
from tui_agent.session._paths import AppPaths
from tui_agent.vocab import ToolCall, ToolResult

MEMORY_FILES = ("AGENTS.md", "CLAUDE.md", "CLAUDE.local.md")
MAX_FILE_CHARS = 40_000
MAX_TOTAL_CHARS = 120_000
MAX_IMPORT_DEPTH = 5
FILE_TOOLS = ("read_file", "edit_file", "write_file")  # their `path` brings its folder's memory
# `@path` at a word's start; the path has a slash or a dot (so `@team` or `@v2` is a word).
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:~/|\.{0,2}/)?[\w.\-/]*[/.][\w.\-/]*\w)")
_FENCE = re.compile(r"^\s*(```|~~~)")


def claude_home() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(base) if base else Path.home() / ".claude"


def repository_root(workspace: Path) -> Path:
    """The git root above (or at) the workspace, else the workspace itself."""
    for folder in (workspace, *workspace.parents):
        if (folder / ".git").exists():
            return folder
    return workspace


def user_memory_files(paths: AppPaths | None = None) -> list[Path]:
    """The person's own memory files, whether they exist or not (`/memory` may create one)."""
    home = (paths or AppPaths.from_env()).config_file.parent
    return [home / "AGENTS.md", claude_home() / "CLAUDE.md"]


def project_memory_files(workspace: Path) -> list[Path]:
    """Those that exist from the repository root down to the workspace, in order."""
    root = repository_root(workspace)
    parts = workspace.relative_to(root).parts
    chain = [root.joinpath(*parts[:depth]) for depth in range(len(parts) + 1)]
    return [folder / name for folder in chain for name in MEMORY_FILES if (folder / name).is_file()]


def load_instructions(
    workspace: Path | str, paths: AppPaths | None = None
) -> list[ProjectInstructions]:
    """Every memory file that applies at start, in order, with its imports."""
    workspace = Path(workspace)
    reader = MemoryReader(workspace)
    files = [p for p in user_memory_files(paths) if p.is_file()]
    return reader.read([*files, *project_memory_files(workspace)])


@dataclass
class MemoryReader:
    """Reads memory files with their imports, each real file once, within the size bounds."""

    workspace: Path
    seen: set[Path] = field(default_factory=set)
    total: int = 0

    def read(self, files: Iterable[Path]) -> list[ProjectInstructions]:
        found: list[ProjectInstructions] = []
        for path in files:
            self._read(path, found, depth=0, chain=())
        return found

    def _read(
        self, path: Path, found: list[ProjectInstructions], depth: int, chain: tuple[Path, ...]
    ) -> None:
        real = path.resolve()
        if real in self.seen:
            return  # CLAUDE.md is often a symlink to AGENTS.md: read once
        try:
            text = path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return
        self.seen.add(real)
        label = self._label(path)
        imports: list[Path] = []
        notes: list[str] = []
        for word in _import_words(text):
            target = _resolve(word, path.parent)
            if not target.is_file():
                continue  # not a file: a word that starts with @
            reason = self._refusal(target.resolve(), depth, (*chain, real))
            if reason:
                notes.append(f"[@{word} was not imported: {reason}]")
            else:
                imports.append(target)
        if not text and not imports:
            return
        text = self._bounded(label, "\n".join([text, *notes]).strip())
        found.append(ProjectInstructions(name=label, text=text))
        for target in imports:
            self._read(target, found, depth + 1, (*chain, real))

    def _refusal(self, real: Path, depth: int, chain: tuple[Path, ...]) -> str | None:
        if real in chain:
            return "it imports itself through a cycle"
        if depth + 1 > MAX_IMPORT_DEPTH:
            return f"imports go at most {MAX_IMPORT_DEPTH} levels deep"
        allowed = (repository_root(self.workspace).resolve(), Path.home().resolve())
        if not any(real.is_relative_to(folder) for folder in allowed):
            return "only files inside the repository or your home folder are imported"
        return None

    def _bounded(self, label: str, text: str) -> str:
        if len(text) > MAX_FILE_CHARS:
            text = (
                text[:MAX_FILE_CHARS]
                + f"\n\n[{label} was cut at {MAX_FILE_CHARS} characters; read the file for the "
                "rest.]"
            )
        room = MAX_TOTAL_CHARS - self.total
        if len(text) > room:
            text = (
                text[: max(room, 0)]
                + f"\n\n[memory files are limited to {MAX_TOTAL_CHARS} characters together: "
                f"{label} was cut here; read the file for the rest.]"
            )
        self.total += len(text)
        return text

    def _label(self, path: Path) -> str:
        # Relative to the repository's root: the root's AGENTS.md and the workspace's differ.
        root = repository_root(self.workspace)
        for base, prefix in ((root, ""), (Path.home(), "~/")):
            if path.is_relative_to(base):
                return prefix + path.relative_to(base).as_posix()
        return str(path)


def _import_words(text: str) -> list[str]:
    words: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            # Inline code is an example, not an import.
            words += _IMPORT.findall(re.sub(r"`[^`]*`", "", line))
    return words


def _resolve(word: str, folder: Path) -> Path:
    if word.startswith("~/"):
        return Path.home() / word[2:]
    return folder / word


class NestedMemory:
    """The memory files of folders below the workspace, each folder's joining the context the
    first time the agent reads or edits a file in it. `loaded` holds the folders already
    given (kept in the session's history as the notes' markers, so a resumed session does not
    give them twice)."""

    MARKER = "<memory folder="

    def __init__(self, workspace: Path, loaded: Iterable[str] = ()) -> None:
        self._workspace = workspace
        self._loaded = set(loaded)

    def note_for(self, relative_path: str) -> str | None:
        """The memory files new to the context for a file the agent touched, or None."""
        target = (self._workspace / relative_path).resolve()
        workspace = self._workspace.resolve()
        if not target.is_relative_to(workspace):
            return None
        folders: list[Path] = []
        for folder in reversed(target.parents):
            if folder.is_relative_to(workspace) and folder != workspace:
                folders.append(folder)
        parts: list[str] = []
        for folder in folders:
            key = folder.relative_to(workspace).as_posix()
            if key in self._loaded:
                continue
            self._loaded.add(key)
            files = [folder / name for name in MEMORY_FILES if (folder / name).is_file()]
            for item in MemoryReader(self._workspace).read(files):
                parts.append(f'{self.MARKER}"{key}" file="{item.name}">\n{item.text}\n</memory>')
        if not parts:
            return None
        return (
            "Instructions for the folder of this file (follow them for work there):\n"
            + "\n".join(parts)
        )

    async def add_note(self, call: ToolCall, result: ToolResult) -> ToolResult:
        """A `ResultNote` for the loop: a file tool's result carries the memory of its folder."""
        if call.name not in FILE_TOOLS or result.is_error:
            return result
        try:
            path = json.loads(call.arguments).get("path")
        except (ValueError, AttributeError):
            return result
        if not isinstance(path, str):
            return result
        note = await asyncio.to_thread(self.note_for, path)
        if note is None:
            return result
        return result.model_copy(
            update={"note": f"{result.note}\n\n{note}" if result.note else note}
        )

    @classmethod
    def loaded_in(cls, texts: Iterable[str]) -> list[str]:
        """The folders whose memory earlier notes gave, from the texts of the history."""
        pattern = re.compile(re.escape(cls.MARKER) + r'"([^"]*)"')
        return [m.group(1) for text in texts for m in pattern.finditer(text)]
