"""Loop benchmarks: event-log folding and appending (end-to-end sections come later).

Run: `.venv/bin/python benchmarks/loop.py`. Prints one table; nothing is asserted.

- fold: a 100,000-event log shaped like real sessions (each step: a think and a text part,
  two tool calls with ~400-character results, a step end) is read from disk, parsed, folded
  into history (including the garbage collection the new objects cause) and projected for
  the model. Target: `load_history` below 1 s.
- append: events per second through `EventLog`, queued with `write` (the loop's way) and
  awaited one by one with `append`, with and without fsync (fsync falls on every step end,
  one record in seven here, as in a real session).
"""

from __future__ import annotations

import asyncio
import gc
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tui_agent.context import (
    ContentPartDone,
    EventLog,
    Prompt,
    Record,
    StepBegin,
    StepEnd,
    ToolCallStarted,
    ToolResultRecorded,
    TurnBegin,
    TurnEnd,
    TurnOutcome,
    fold,
    load_history,
    project,
    read_log,
)
from tui_agent.vocab import (
    FinishReason,
    TextPart,
    ThinkPart,
    TokenUsage,
    ToolCall,
    user_message,
)

FOLD_EVENTS = 100_000
APPEND_EVENTS = 20_000
RESULT_TEXT = "line of tool output, as a file or a command would print it\n" * 7


@dataclass(frozen=True)
class Row:
    section: str
    measure: str
    value: str
    note: str = ""


def session_records(count: int) -> Iterator[Record]:
    """`count` records of turns with 5 tool steps and a final answer each."""
    emitted = 0
    turn = 0
    while True:
        turn += 1
        turn_records: list[Record] = [
            Prompt(prompt_id=f"p{turn}", message=user_message(f"Task number {turn}: fix it.")),
            TurnBegin(turn_id=turn, prompt_ids=(f"p{turn}",)),
        ]
        for step in range(6):
            uuid = f"t{turn}s{step}"
            turn_records.append(StepBegin(uuid=uuid, turn_id=turn, step=step + 1))
            turn_records.append(
                ContentPartDone(step_uuid=uuid, part=ThinkPart(think="Thinking it over. " * 4))
            )
            turn_records.append(
                ContentPartDone(step_uuid=uuid, part=TextPart(text="Let me look at that."))
            )
            if step < 5:
                for n in range(2):
                    call = ToolCall(
                        id=f"c{turn}_{step}_{n}",
                        name="read_file",
                        arguments=f'{{"path": "src/module_{n}.py"}}',
                    )
                    turn_records.append(ToolCallStarted(step_uuid=uuid, call=call))
                for n in range(2):
                    turn_records.append(
                        ToolResultRecorded(call_id=f"c{turn}_{step}_{n}", output=RESULT_TEXT)
                    )
            reason = FinishReason.TOOL_USE if step < 5 else FinishReason.END_TURN
            usage = TokenUsage(input_other=1_000 * step, output=80)
            turn_records.append(StepEnd(uuid=uuid, finish_reason=reason, usage=usage))
        turn_records.append(TurnEnd(turn_id=turn, result=TurnOutcome(type="completed", steps=6)))
        for record in turn_records:
            if emitted == count:
                return
            emitted += 1
            yield record


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float

    def __add__(self, other: Timing) -> Timing:
        return Timing(self.wall + other.wall, self.cpu + other.cpu)

    def __str__(self) -> str:
        return f"{self.wall * 1000:,.0f} ms ({self.cpu * 1000:,.0f} ms CPU)"


def timed(action: Callable[[], object]) -> tuple[Timing, object]:
    """Wall and CPU time: on a busy machine the CPU figure is the one to compare."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = action()
    return Timing(time.perf_counter() - wall, time.process_time() - cpu), result


def bench_fold(directory: Path) -> list[Row]:
    path = directory / "fold.jsonl"
    with path.open("wb") as file:
        for record in session_records(FOLD_EVENTS):
            file.write(record.model_dump_json().encode() + b"\n")
    size_mb = path.stat().st_size / 1e6
    section = f"fold {FOLD_EVENTS:,} events"
    # What resuming costs: read, parse and fold; then the one full collection the new objects
    # will cost later (Python runs it some time after, usually while the model is streaming).
    gc.collect()
    whole, history = timed(lambda: load_history(path))
    assert isinstance(history, list)
    collect, _ = timed(gc.collect)
    gc.collect()
    read_s, records = timed(lambda: read_log(path))
    assert isinstance(records, list)
    gc.collect()
    fold_s, _ = timed(lambda: fold(records))
    records.clear()
    gc.collect()
    project_s, _ = timed(lambda: project(history))
    return [
        Row(section, "load_history (read + fold)", str(whole), "target < 1,000 ms"),
        Row(section, "  of which read + parse", str(read_s), f"{size_mb:.1f} MB on disk"),
        Row(section, "  of which fold", str(fold_s), f"{len(history):,} history entries"),
        Row(section, "then one full collection", str(collect), "paid later, once"),
        Row(section, "project for the model", str(project_s)),
    ]


async def _append_rate(path: Path, *, fsync: bool, awaited: bool) -> tuple[float, int]:
    records = list(session_records(APPEND_EVENTS))
    log = EventLog(path, fsync=fsync)
    start = time.perf_counter()
    if awaited:
        for record in records:
            await log.append(record)
    else:
        for record in records:
            log.write(record)
    await log.close()
    return len(records) / (time.perf_counter() - start), log.fsyncs


def bench_append(directory: Path) -> list[Row]:
    rows = []
    for awaited in (False, True):
        for fsync in (True, False):
            name = f"append-{awaited}-{fsync}.jsonl"
            rate, fsyncs = asyncio.run(_append_rate(directory / name, fsync=fsync, awaited=awaited))
            how = "append() awaited each" if awaited else "write() queued"
            rows.append(
                Row(
                    f"append {APPEND_EVENTS:,} events",
                    f"{how}, fsync {'on' if fsync else 'off'}",
                    f"{rate:,.0f} events/s",
                    f"{fsyncs:,} fsyncs",
                )
            )
    return rows


def print_table(rows: list[Row]) -> None:
    headers = ("section", "measure", "value", "note")
    table = [headers, *((r.section, r.measure, r.value, r.note) for r in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    for index, row in enumerate(table):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
        if index == 0:
            print("  ".join("-" * width for width in widths))


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="tui-agent-bench-") as name:
        directory = Path(name)
        print_table([*bench_fold(directory), *bench_append(directory)])


if __name__ == "__main__":
    main()
