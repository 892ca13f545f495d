"""The event log's one writer, as the engine and the loop see it (`loop.journal.LogJournal`).

Every record of a session's log is handed to `write`; nothing else in the loop appends to the
log. Records are built where their fact happens (the loop event that fact publishes is built
from the record by `loop.transcript`)."""

from __future__ import annotations

import asyncio
from typing import Protocol

from tui_agent.context import Record


class Journal(Protocol):
    def durable(self) -> asyncio.Future[None]:
        """Resolves once every record written so far is on disk (flushed and fsynced)."""
        ...

    def write(self, record: Record) -> None:
        """Queue `record` for the log (returns at once; the log's writer keeps the order)."""
        ...
