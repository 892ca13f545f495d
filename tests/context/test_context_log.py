"""The append-only event log: ordering, flush and fsync points, torn lines, failures."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.context.context_builders import LogBuilder, entry
from tui_agent.context import (
    BranchSwitch,
    Compaction,
    EventLog,
    EventLogError,
    Notification,
    Prompt,
    Record,
    SessionMeta,
    StepEnd,
    TurnBegin,
    TurnEnd,
    TurnOutcome,
    describe_bad_lines,
    fold,
    fold_log,
    load_history,
    parse_log,
    read_log,
    read_log_async,
)
from tui_agent.context import _fold as fold_module
from tui_agent.context import _log as log_module
from tui_agent.vocab import FinishReason, HistoryEntry, user_message


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return calls


def _sample() -> LogBuilder:
    log = LogBuilder().prompt("read it")
    turn = log.turn()
    step = log.step()
    log.text(step, "ok").call(step, "c1").result("c1", "body").end(step, FinishReason.TOOL_USE)
    log.turn_end(turn)
    return log


async def test_records_round_trip_in_order(tmp_path: Path) -> None:
    records = _sample().records
    log = EventLog(tmp_path / "events.jsonl")

    for record in records:
        log.write(record)
    await log.close()

    assert read_log(tmp_path / "events.jsonl") == records


async def test_each_line_is_one_json_object_with_type_first(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    log = EventLog(path)

    await log.append(Prompt(prompt_id="p1", message=user_message("hi")))
    await log.close()

    line = path.read_text().splitlines()[0]
    assert line.startswith('{"type":"prompt","ts":')
    assert json.loads(line)["prompt_id"] == "p1"


async def test_append_returns_once_the_record_is_readable_by_another_reader(
    tmp_path: Path,
) -> None:
    path = tmp_path / "events.jsonl"
    log = EventLog(path)

    await log.append(Prompt(prompt_id="p1", message=user_message("hi")))

    assert len(parse_log(path.read_bytes())) == 1
    await log.close()


async def test_only_step_end_turn_end_and_compaction_are_fsynced(
    tmp_path: Path, fsyncs: list[int]
) -> None:
    log = EventLog(tmp_path / "events.jsonl")
    durable = [
        StepEnd(uuid="s", finish_reason=FinishReason.END_TURN),
        TurnEnd(turn_id=1, result=TurnOutcome(type="completed", steps=1)),
        Compaction(summary="s"),
    ]

    await log.append(SessionMeta(session_id="x", workspace="/w"))
    await log.append(Prompt(prompt_id="p1", message=user_message("hi")))
    assert fsyncs == []
    for count, record in enumerate(durable, start=1):
        await log.append(record)
        assert len(fsyncs) == count
    await log.close()


async def test_drain_fsyncs_what_was_written_without_waiting(
    tmp_path: Path, fsyncs: list[int]
) -> None:
    path = tmp_path / "events.jsonl"
    log = EventLog(path)
    records = _sample().records[:3]
    for record in records:
        log.write(record)

    await log.drain()

    assert parse_log(path.read_bytes()) == records
    assert len(fsyncs) == 1
    await log.close()


async def test_fsync_can_be_turned_off(tmp_path: Path, fsyncs: list[int]) -> None:
    log = EventLog(tmp_path / "events.jsonl", fsync=False)

    await log.append(StepEnd(uuid="s", finish_reason=FinishReason.END_TURN))
    await log.close()

    assert fsyncs == []
    assert log.records_written == 1


async def test_torn_last_line_is_ignored_silently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "events.jsonl"
    records = _sample().records
    whole = b"".join(r.model_dump_json().encode() + b"\n" for r in records)
    path.write_bytes(whole + b'{"type":"step.begin","uuid":"s9","tu')

    assert read_log(path) == records
    assert capsys.readouterr() == ("", "")


async def test_bad_lines_in_the_middle_are_skipped_and_numbered(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    one = Prompt(prompt_id="p1", message=user_message("one"))
    two = Prompt(prompt_id="p2", message=user_message("two"))
    path.write_text(
        f"{one.model_dump_json()}\n{{not json\n\x00\x01garbage\n{two.model_dump_json()}\n"
        '{"type":"prompt","prompt_id":"p3"}\n{"type":"step.begin","uuid":"s9","tu'
    )
    bad: list[int] = []

    assert read_log(path, bad) == [one, two]
    assert bad == [2, 3, 5]  # the torn last line is not damage


async def test_bad_lines_are_numbered_in_the_file_after_a_compaction(tmp_path: Path) -> None:
    log = LogBuilder().prompt("before")
    log.records.append(Compaction(summary="s"))
    log.prompt("after", prompt_id="p2")
    lines = [r.model_dump_json() for r in log.records]
    lines.insert(2, "{broken")
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n")
    bad: list[int] = []

    history = load_history(path, bad)

    assert bad == [3]
    assert [e.message.text for e in history][-1] == "after"


def test_a_report_of_skipped_lines_names_the_file_and_the_lines() -> None:
    text = describe_bad_lines("/s/events.jsonl", [2, 3, 5])
    assert text.startswith("/s/events.jsonl: skipped lines 2, 3, 5: not valid event records")
    many = describe_bad_lines("log", list(range(1, 30)))
    assert "and 19 more" in many


async def test_a_log_path_that_is_a_folder_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.mkdir()

    with pytest.raises(EventLogError, match=r"cannot read .*events\.jsonl: Is a directory"):
        read_log(path)
    with pytest.raises(EventLogError, match="Is a directory"):
        await read_log_async(path)
    with pytest.raises(EventLogError, match="Is a directory"):
        load_history(path)


async def test_repairing_a_long_torn_tail_reads_it_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "events.jsonl"
    first = Prompt(prompt_id="p1", message=user_message("one"))
    torn = b'{"type":"prompt","message":"' + b"x" * 3_000_000
    path.write_bytes(first.model_dump_json().encode() + b"\n" + torn)
    read_sizes: list[int] = []
    real_open = log_module.aiofiles.open

    def counting_open(*args: Any, **kwargs: Any) -> Any:
        handle = real_open(*args, **kwargs)
        return _CountingReads(handle, read_sizes)

    monkeypatch.setattr(log_module.aiofiles, "open", counting_open)

    await log_module._repair_tail(path)

    assert path.read_bytes() == first.model_dump_json().encode() + b"\n"
    assert sum(read_sizes) <= 3 * len(torn)  # linear: each byte read a few times at most


async def test_unknown_record_types_from_a_newer_version_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    good = Prompt(prompt_id="p1", message=user_message("hi"))
    path.write_text(f'{{"type":"hologram","ts":1}}\n{good.model_dump_json()}\n')

    assert read_log(path) == [good]


async def test_missing_log_reads_as_empty(tmp_path: Path) -> None:
    assert read_log(tmp_path / "nothing.jsonl") == []
    assert await read_log_async(tmp_path / "nothing.jsonl") == []


async def test_reading_without_blocking_gives_the_same_records(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    records = _sample().records
    path.write_bytes(b"".join(r.model_dump_json().encode() + b"\n" for r in records))

    assert await read_log_async(path) == records


async def test_reopening_after_a_torn_tail_cuts_it_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    first = Prompt(prompt_id="p1", message=user_message("one"))
    path.write_bytes(first.model_dump_json().encode() + b'\n{"type":"prom')
    second = Prompt(prompt_id="p2", message=user_message("two"))

    log = EventLog(path)
    await log.append(second)
    await log.close()

    assert path.read_bytes().count(b"\n") == 2
    assert read_log(path) == [first, second]


async def test_reopening_keeps_a_whole_record_that_lost_only_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    first = Prompt(prompt_id="p1", message=user_message("one"))
    path.write_bytes(first.model_dump_json().encode())
    second = Prompt(prompt_id="p2", message=user_message("two"))

    log = EventLog(path)
    await log.append(second)
    await log.close()

    assert read_log(path) == [first, second]


async def test_a_log_that_cannot_be_written_says_so(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.mkdir()
    log = EventLog(path)

    with pytest.raises(EventLogError, match="cannot write"):
        await log.append(Prompt(prompt_id="p1", message=user_message("hi")))
    log.write(Prompt(prompt_id="p2", message=user_message("dropped, never raised")))
    assert log.error is not None and str(path) in str(log.error)
    with pytest.raises(EventLogError):
        await log.drain()
    with pytest.raises(EventLogError):
        await log.close()


async def test_writing_after_close_is_refused(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl")
    await log.append(Prompt(prompt_id="p1", message=user_message("hi")))
    await log.close()

    with pytest.raises(EventLogError, match="closed"):
        log.write(Prompt(prompt_id="p2", message=user_message("late")))


async def test_entries_keep_their_meta_through_the_log(tmp_path: Path) -> None:
    record = Notification(entry=entry("user", "build done", source="notify"))
    log = EventLog(tmp_path / "events.jsonl")
    await log.append(record)
    await log.close()

    assert (read_log(tmp_path / "events.jsonl"))[0] == record


def test_load_history_folds_a_log_file_with_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    whole = b"".join(r.model_dump_json().encode() + b"\n" for r in _sample().records)
    path.write_bytes(whole + b'{"type":"prompt","prom')

    history = load_history(path)

    assert [e.message.role for e in history] == ["user", "assistant", "tool"]


def _lines(records: list[Record]) -> bytes:
    return b"".join(r.model_dump_json().encode() + b"\n" for r in records)


def test_load_history_reads_only_from_the_last_compaction(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    after = Prompt(prompt_id="p2", message=user_message("after"))
    compaction = Compaction(summary="before", kept=(entry("user", "kept"),))
    # A line no reader could parse, before the compaction: proof it is never read.
    path.write_bytes(b"{garbage\n" + _lines([compaction, after]))

    history = load_history(path)

    assert [e.message.text for e in history[1:]] == ["kept", "after"]
    assert history == fold([compaction, after])


def test_a_whole_log_is_folded_from_its_last_compaction_as_if_from_its_first_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = _sample().records
    compaction = Compaction(summary="before", kept=(entry("user", "kept"),))
    records = [*before, compaction, Prompt(prompt_id="p2", message=user_message("after"))]
    folded: list[list[Record]] = []

    def seen(records: Iterable[Record], entries: Iterable[HistoryEntry] = ()) -> list[HistoryEntry]:
        folded.append(list(records))
        return fold(records, entries)

    monkeypatch.setattr(fold_module, "fold", seen)
    history = fold_log(records)

    assert folded == [records[len(before) :]]  # nothing before the compaction is folded
    assert history == fold(records)


def test_a_log_with_a_switch_back_past_its_compaction_is_folded_whole_from_disk_too(
    tmp_path: Path,
) -> None:
    records = [
        TurnBegin(turn_id=0),
        Prompt(prompt_id="p0", message=user_message("before")),
        TurnBegin(turn_id=1),
        Compaction(summary="all of it"),
        BranchSwitch(turn=0),
    ]
    path = tmp_path / "events.jsonl"
    path.write_bytes(_lines(records))

    assert [e.message.text for e in fold_log(records)] == ["before"]
    assert [e.message.text for e in load_history(path)] == ["before"]


def test_a_torn_compaction_at_the_end_falls_back_to_the_history_before_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "events.jsonl"
    records = _sample().records
    torn = Compaction(summary="lost").model_dump_json().encode()[:30]
    path.write_bytes(_lines(records) + torn)

    assert load_history(path) == fold(records)


async def test_write_returns_before_touching_the_disk(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    log = EventLog(path)

    log.write(Prompt(prompt_id="p1", message=user_message("hi")))

    assert not path.exists()
    await log.drain()
    assert len(read_log(path)) == 1
    await log.close()


async def test_writes_from_many_tasks_keep_call_order(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    log = EventLog(path)
    order: list[str] = []

    async def writer(name: str) -> None:
        for n in range(20):
            prompt_id = f"{name}{n}"
            order.append(prompt_id)
            if n % 3:
                log.write(Prompt(prompt_id=prompt_id, message=user_message("x")))
            else:
                await log.append(Prompt(prompt_id=prompt_id, message=user_message("x")))

    await asyncio.gather(writer("a"), writer("b"), writer("c"))
    await log.close()

    written = [r.prompt_id for r in read_log(path) if isinstance(r, Prompt)]
    assert written == order


class _CountingReads:
    """Wraps an aiofiles context manager and records how many bytes each read returns."""

    def __init__(self, opening: Any, sizes: list[int]) -> None:
        self._opening = opening
        self._sizes = sizes

    async def __aenter__(self) -> Any:
        file = await self._opening.__aenter__()
        real_read = file.read
        sizes = self._sizes

        async def read(*args: Any) -> bytes:
            data: bytes = await real_read(*args)
            sizes.append(len(data))
            return data

        file.read = read
        return file

    async def __aexit__(self, *exc: object) -> None:
        await self._opening.__aexit__(*exc)
