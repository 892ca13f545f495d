"""The append-only event log of a session: writing records as JSONL and reading them back.

Writes never block the event loop: `write` queues a record and returns at once (the loop's
journal calls it from synchronous callbacks), a background task writes queued records in
order, flushes after each batch and fsyncs when a batch holds a durable record (step end,
turn end, compaction). `append` and `drain` wait for the disk, `close` drains and closes.

A crash can tear the last line. Reading ignores a torn last line silently and skips any other
line that is not a record, reporting its number (a damaged log still opens); opening a log for
append first repairs the tail (terminates it when it is a whole record, cuts it off otherwise,
in time linear in its length), so a new record never glues onto garbage.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import aiofiles
import aiofiles.os
from pydantic import ValidationError

from tui_agent.context._bulk import gc_paused
from tui_agent.context._records import RECORD_ADAPTER, RECORD_TYPES, Record
from tui_agent.lazy_dataclass import dataclass

_TAIL_CHUNK = 64 * 1024


class EventLogError(Exception):
    """The log cannot be read or written (a folder in its place, no permission, disk full)."""


@dataclass
class _Item:
    data: bytes  # empty for a pure barrier (drain)
    durable: bool
    done: asyncio.Future[None] | None


class EventLog:
    def __init__(self, path: Path | str, *, fsync: bool = True) -> None:
        self.path = Path(path)
        self._fsync_enabled = fsync
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._error: BaseException | None = None
        self._closed = False
        self.records_written = 0
        self.fsyncs = 0
        self._unsynced = False  # bytes written since the last fsync

    @property
    def error(self) -> EventLogError | None:
        """The write failure that stopped the log, if any (disk full, permissions, ...)."""
        if self._error is None:
            return None
        return EventLogError(f"cannot write {self.path}: {self._error}")

    def write(self, record: Record) -> None:
        """Queue `record` for writing; returns at once. Order of calls is order on disk.

        It never raises for a failed disk: the loop calls it from inside state-machine
        callbacks, which must not break. After a failure records are dropped and `error`,
        `append`, `drain` and `close` report it. Writing to a closed log is a bug and raises.
        """
        if self._error is None:
            self._put(_Item(_encode(record), type(record).durable, None))
        elif self._closed:
            raise EventLogError(f"{self.path} is closed")

    async def append(self, record: Record) -> None:
        """Write `record` and wait until it is flushed (and fsynced if it is durable)."""
        done = asyncio.get_running_loop().create_future()
        self._put(_Item(_encode(record), type(record).durable, done))
        await done

    async def drain(self) -> None:
        """Wait until every record queued so far is written, flushed and fsynced."""
        if self._task is None and self._error is None:
            return
        await self.barrier()

    def barrier(self) -> asyncio.Future[None]:
        """A future that resolves once every record queued so far is written, flushed and
        fsynced (at once when nothing was ever queued); it fails like `append` when the log
        cannot be written. Synchronous, for callers inside state-machine callbacks."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._task is None and self._error is None:
            done.set_result(None)
            return done
        try:
            self._put(_Item(b"", True, done))
        except EventLogError as error:
            done.set_exception(error)
        return done

    async def close(self) -> None:
        if self._closed:
            return
        try:
            await self.drain()
        finally:
            self._closed = True
            if self._task is not None:
                self._task.cancel()
                try:
                    await self._task
                except asyncio.CancelledError:
                    pass
                self._task = None

    def _put(self, item: _Item) -> None:
        if self._error is not None:
            raise EventLogError(f"cannot write {self.path}: {self._error}") from self._error
        if self._closed:
            raise EventLogError(f"{self.path} is closed")
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name=f"event-log:{self.path.name}"
            )
        self._queue.put_nowait(item)

    async def _run(self) -> None:
        try:
            await aiofiles.os.makedirs(self.path.parent, exist_ok=True)
            await _repair_tail(self.path)
            async with aiofiles.open(self.path, "ab") as file:
                while True:
                    batch = [await self._queue.get()]
                    while not self._queue.empty():
                        batch.append(self._queue.get_nowait())
                    await self._write_batch(file, batch)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # disk full, permissions: every waiter learns of it
            self._error = exc
            self._fail_waiters(exc)

    async def _write_batch(self, file: Any, batch: list[_Item]) -> None:
        try:
            chunk = b"".join(item.data for item in batch)
            if chunk:
                await file.write(chunk)
                await file.flush()
                self.records_written += sum(1 for item in batch if item.data)
                self._unsynced = True
            if self._fsync_enabled and self._unsynced and any(item.durable for item in batch):
                # Resolved at call time (not bound at import) so tests can observe it.
                await asyncio.to_thread(os.fsync, file.fileno())
                self.fsyncs += 1
                self._unsynced = False  # a barrier with nothing new to sync costs nothing
        except Exception as exc:
            for item in batch:
                if item.done is not None and not item.done.done():
                    item.done.set_exception(EventLogError(f"cannot write {self.path}: {exc}"))
            raise
        for item in batch:
            if item.done is not None and not item.done.done():
                item.done.set_result(None)

    def _fail_waiters(self, exc: BaseException) -> None:
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if item.done is not None and not item.done.done():
                item.done.set_exception(EventLogError(f"cannot write {self.path}: {exc}"))


def _encode(record: Record) -> bytes:
    return record.model_dump_json().encode() + b"\n"


async def _repair_tail(path: Path) -> None:
    """Terminate or cut off a last line that a crash left without its newline.

    Linear in the torn line's length: chunks are read backwards only until a newline shows,
    then the line is read once."""
    if not await aiofiles.os.path.exists(path):
        return
    async with aiofiles.open(path, "r+b") as file:
        size = await file.seek(0, os.SEEK_END)
        if size == 0:
            return
        await file.seek(size - 1)
        if await file.read(1) == b"\n":
            return
        start = 0
        end = size
        while end > 0:
            begin = max(0, end - _TAIL_CHUNK)
            await file.seek(begin)
            newline = (await file.read(end - begin)).rfind(b"\n")
            if newline >= 0:
                start = begin + newline + 1
                break
            end = begin
        await file.seek(start)
        if _parse_line(await file.read(size - start)) is not None:
            await file.seek(size)
            await file.write(b"\n")
        else:
            await file.truncate(start)


def _parse_line(line: bytes) -> Record | None:
    try:
        return RECORD_ADAPTER.validate_json(line)
    except ValidationError:
        return None


def read_log(path: Path | str, bad_lines: list[int] | None = None) -> list[Record]:
    """Every record of the log at `path`, in order; a missing file is an empty log.

    Synchronous for start-up, before the loop runs; `read_log_async` reads without blocking.
    Lines that are not records are skipped; their numbers go to `bad_lines` when given.
    Raises `EventLogError` when the file cannot be read (a folder, no permission).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise EventLogError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return parse_log(data, bad_lines)


async def read_log_async(path: Path | str, bad_lines: list[int] | None = None) -> list[Record]:
    path = Path(path)
    if not await aiofiles.os.path.exists(path):
        return []
    try:
        async with aiofiles.open(path, "rb") as file:
            data = await file.read()
    except OSError as exc:
        raise EventLogError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return parse_log(data, bad_lines)


def parse_log(
    data: bytes, bad_lines: list[int] | None = None, *, first_line: int = 1
) -> list[Record]:
    """Parse JSONL `data`: a torn last line is ignored, unknown record types are skipped, and
    any other line that is not a record is skipped with its number (counted from
    `first_line`) added to `bad_lines`. Never raises for what the data holds."""
    lines = data.split(b"\n")
    last = len(lines) - 1
    if not lines[last]:  # the data ends with a newline: nothing is torn
        last -= 1
    records: list[Record] = []
    with gc_paused():
        for index, line in enumerate(lines):
            if not line or line.isspace():
                continue
            record = _parse_line(line)
            if record is not None:
                records.append(record)
            elif index != last and not _is_unknown_type(line) and bad_lines is not None:
                bad_lines.append(first_line + index)
    return records


def describe_bad_lines(source: str, bad_lines: list[int]) -> str:
    """What a user reads when lines of a log were skipped."""
    shown = ", ".join(str(n) for n in bad_lines[:10])
    more = f" and {len(bad_lines) - 10} more" if len(bad_lines) > 10 else ""
    plural = "s" if len(bad_lines) > 1 else ""
    return (
        f"{source}: skipped line{plural} {shown}{more}: not valid event records "
        "(the rest of the session was loaded)."
    )


def _is_unknown_type(line: bytes) -> bool:
    try:
        value = json.loads(line)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("type") not in RECORD_TYPES
