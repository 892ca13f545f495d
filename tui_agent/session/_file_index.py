"""The workspace's files and folders, for `@` completion in the prompt.

`FileIndex.load` lists the workspace with ripgrep (`rg --files`, which honours `.gitignore`,
`.ignore` and `.git/info/exclude`), or with our own walker when `rg` is missing, in a worker
that never blocks the app. `match` narrows the list as the user types: a query found in a file
or folder name ranks first (at its start best), then one found in the path, then the query's
letters in order (`apmain` finds `app/main.py`). Each keystroke scans the previous keystroke's
matches when it only added letters, so typing on stays cheap on a large tree.
"""

from __future__ import annotations

import asyncio
import heapq
import operator
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from tui_agent.tools import rg_files, rg_path, walk_files
from tui_agent.vocab import AbortSignal

LIST_TIMEOUT_S = 30.0
MAX_ENTRIES = 500_000


class FileIndex:
    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.entries: list[str] = []  # files, and folders with a trailing "/", sorted
        self.ready = asyncio.Event()
        self._lower: list[str] = []
        self._names: list[str] = []  # each entry's last part, lower case
        self._last: tuple[str, list[int]] | None = None  # the last query and its matches

    async def load(self, signal: AbortSignal | None = None) -> None:
        files = await _list_files(str(self.workspace), signal or AbortSignal())
        self.set_files(files)

    def set_files(self, files: list[str]) -> None:
        # Cheap on 100,000 files: the folders come from the distinct parents (a few thousand),
        # and the order by depth, then path, from two sorts with no Python key function.
        folders: set[str] = set()
        for parent in {path.rpartition("/")[0] for path in files}:
            while parent and parent + "/" not in folders:
                folders.add(parent + "/")
                parent = parent.rpartition("/")[0]
        self.entries = sorted(folders.union(files))
        self.entries.sort(key=operator.methodcaller("count", "/"))  # stable: paths stay sorted
        self._lower = [entry.lower() for entry in self.entries]
        self._names = [entry.rstrip("/").rpartition("/")[2] for entry in self._lower]
        self._last = None
        self.ready.set()

    def match(self, query: str, limit: int = 20) -> list[str]:
        """The best `limit` entries for `query` (empty: the top of the tree)."""
        q = query.lower()
        if not q:
            return self.entries[:limit]
        pool: Sequence[int] = range(len(self.entries))
        if self._last is not None and q.startswith(self._last[0]):
            pool = self._last[1]
        lower, names = self._lower, self._names
        hits = [i for i in pool if q in lower[i]]
        if len(hits) < limit:
            letters = re.compile(".*?".join(map(re.escape, q)))
            seen = set(hits)
            hits += [i for i in pool if i not in seen and letters.search(lower[i])]
        self._last = (q, hits)
        # Best first, tier by tier, taking only what is still needed from each: the first
        # letter of a query can match most of a large tree, and sorting it all would show.
        tiers: tuple[Callable[[int], bool], ...] = (
            lambda i: names[i].startswith(q),
            lambda i: q in names[i],
            lambda i: q in lower[i],
            lambda i: True,
        )
        chosen: list[int] = []
        for in_tier in tiers:
            taken = set(chosen)
            members = [i for i in hits if i not in taken and in_tier(i)]
            chosen += heapq.nsmallest(
                limit - len(chosen), members, key=lambda i: (len(lower[i]), lower[i])
            )
            if len(chosen) >= limit:
                break
        return [self.entries[i] for i in chosen]


async def _list_files(root: str, signal: AbortSignal) -> list[str]:
    if rg_path() is not None:
        return await rg_files(root, signal=signal, timeout_s=LIST_TIMEOUT_S, limit=MAX_ENTRIES)

    def walk() -> list[str]:
        real = os.path.realpath(root)
        found: list[str] = []
        for _absolute, rel in walk_files(real, real, lambda: signal.aborted):
            found.append(rel)
            if len(found) >= MAX_ENTRIES:
                break
        return found

    return await asyncio.to_thread(walk)
