"""The journal: the one writer of a session's event log (`adapters.journal.Journal`).

Every write is queued and returns at once (the engine calls it from synchronous kernel
emissions); the log's writer task keeps order, flushes per batch and fsyncs at step ends, turn
ends and compactions, and whenever the loop asks for `durable()` (write-ahead: before it reports
a turn started or a tool result, and before each request to the model).
"""

from __future__ import annotations

import asyncio

from tui_agent.context import EventLog, Record


class LogJournal:
    def __init__(self, log: EventLog) -> None:
        self.log = log

    def durable(self) -> asyncio.Future[None]:
        return self.log.barrier()

    def write(self, record: Record) -> None:
        self.log.write(record)
