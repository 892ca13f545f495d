"""Loop benchmarks: event-log folding and appending, a long session end to end, a one-shot run.

Run: `.venv/bin/python benchmarks/loop.py`. Prints one table; nothing is asserted.

- fold: a 100,000-event log shaped like real sessions (each step: a think and a text part,
  two tool calls with ~400-character results, a step end) is read from disk, parsed, folded
  into history (including the garbage collection the new objects cause) and projected for
  the model. Target: `load_history` below 1 s.
- append: events per second through `EventLog`, queued with `write` (the loop's way) and
  awaited one by one with `append`, with and without fsync (fsync falls on every step end,
  one record in seven here, as in a real session).
- session: one 200-step turn through the real service (kernel, adapters, executor, journal)
  with a zero-latency model and a no-op tool: loop overhead per step.
- write-ahead: the same turn with the event log's fsync on and off. With fsync on, every step
  waits for the log to reach the disk (the prompt before `turn.started`, each tool result
  before `tool.finished`, the history before each request): the difference is its cost.
- torn tail: a log whose last line a crash left unfinished (12.5, 25 and 50 MB without a
  newline, after 1,000 records) gets its next record: the first append cuts the torn line off
  first. CPU time of open + one append + close.
- one-shot: `tui-agent -p "say hi"` as a whole process against a local OpenAI-compatible
  server: wall, CPU and peak RSS (median of 7). Target: < 0.34 s wall, < 0.38 s CPU, < 203 MiB.
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel

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
from tui_agent.loop.api import LoopInfo
from tui_agent.loop.factory import build_loop
from tui_agent.loop.replay import Replay, replay
from tui_agent.loop.service import LoopOptions
from tui_agent.tools import Tool, ToolAccesses, ToolContext
from tui_agent.vocab import (
    Finish,
    Finished,
    FinishReason,
    LLMRequest,
    StreamEvent,
    TextDelta,
    TextPart,
    ThinkPart,
    TokenUsage,
    ToolCall,
    ToolCallDelta,
    ToolResult,
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
    gc.collect()
    replay_s, replayed = timed(lambda: replay(records, context_window=200_000))
    assert isinstance(replayed, Replay)
    records.clear()
    gc.collect()
    project_s, _ = timed(lambda: project(history))
    return [
        Row(section, "load_history (read + fold)", str(whole), "target < 1,000 ms"),
        Row(section, "  of which read + parse", str(read_s), f"{size_mb:.1f} MB on disk"),
        Row(section, "  of which fold", str(fold_s), f"{len(history):,} history entries"),
        Row(
            section,
            "replay for the transcript (resume)",
            str(replay_s),
            f"{len(replayed.events):,} loop events",
        ),
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


TORN_TAILS_MB = (12.5, 25, 50)


async def _append_after_torn_tail(path: Path) -> None:
    log = EventLog(path, fsync=False)
    await log.append(next(session_records(1)))
    await log.close()


def _write_torn(path: Path, size_mb: float) -> None:
    with path.open("wb") as file:
        for record in session_records(1_000):
            file.write(record.model_dump_json().encode() + b"\n")
        file.write(b'{"type": "tool.result", "output": "' + b"x" * int(size_mb * 1e6))


def bench_torn_tail(directory: Path) -> list[Row]:
    rows = []
    for size_mb in TORN_TAILS_MB:
        path = directory / f"torn-{size_mb}.jsonl"
        runs = []
        for _ in range(3):  # best of 3 by CPU; the tail is torn again before each run
            _write_torn(path, size_mb)
            runs.append(timed(lambda: asyncio.run(_append_after_torn_tail(path)))[0])  # noqa: B023
            assert path.read_bytes().endswith(b"}\n")  # the torn line is gone, the record whole
        best = min(runs, key=lambda t: t.cpu)
        rows.append(Row("torn tail", f"{size_mb:g} MB torn line, then one append", str(best)))
        path.unlink()
    return rows


def print_table(rows: list[Row]) -> None:
    headers = ("section", "measure", "value", "note")
    table = [headers, *((r.section, r.measure, r.value, r.note) for r in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    for index, row in enumerate(table):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
        if index == 0:
            print("  ".join("-" * width for width in widths))


SESSION_STEPS = 200


class _NoArgs(BaseModel):
    pass


class _Noop(Tool[_NoArgs]):
    name: ClassVar[str] = "noop"
    description: ClassVar[str] = "Does nothing."
    Args = _NoArgs
    read_only: ClassVar[bool] = True

    def accesses(self, args: _NoArgs) -> ToolAccesses:
        return ToolAccesses.none()

    async def execute(self, args: _NoArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output="ok")


class _InstantModel:
    """Answers every request at once: a call to `noop` until the last step, then text."""

    name = "bench"
    model = "bench"

    def __init__(self, steps: int) -> None:
        self.left = steps

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        self.left -= 1
        if self.left > 0:
            yield ToolCallDelta(index=0, id=f"c{self.left}", name="noop", arguments="{}")
            yield Finished(finish=Finish(reason=FinishReason.TOOL_USE))
        else:
            yield TextDelta(text="done")
            yield Finished(finish=Finish(reason=FinishReason.END_TURN))

    async def aclose(self) -> None:
        return None


async def _session(directory: Path, *, fsync: bool = False) -> tuple[Timing, int]:
    """The turn's timing and how many fsyncs the log made."""
    workspace = directory / "ws"
    workspace.mkdir(exist_ok=True)
    service = await build_loop(
        provider=_InstantModel(SESSION_STEPS),
        info=LoopInfo("scripted", "bench", 1_000_000, "yolo", "bench", str(workspace), False),
        workspace=workspace,
        spill_dir=directory / "spill",
        log=(log := EventLog(directory / f"session-{fsync}.jsonl", fsync=fsync)),
        system_prompt=lambda tools: "bench",
        options=LoopOptions(max_steps=0),
        extra_tools=(_Noop(),),
    )
    wall, cpu = time.perf_counter(), time.process_time()
    result = await (await service.submit("go")).result()
    timing = Timing(time.perf_counter() - wall, time.process_time() - cpu)
    await service.close()
    assert result.type == "completed" and result.steps == SESSION_STEPS, result
    return timing, log.fsyncs


def bench_session(directory: Path) -> list[Row]:
    timing, _fsyncs = asyncio.run(_session(directory))
    per_step = Timing(timing.wall / SESSION_STEPS, timing.cpu / SESSION_STEPS)
    return [
        Row("session", f"{SESSION_STEPS}-step turn, zero-latency model", str(timing)),
        Row(
            "session",
            "loop overhead per step",
            f"{per_step.wall * 1000:.2f} ms",
            f"{per_step.cpu * 1000:.2f} ms CPU; one tool call per step",
        ),
    ]


def bench_write_ahead(directory: Path, runs: int = 5) -> list[Row]:
    rows = []
    for fsync in (False, True):
        timings = [asyncio.run(_session(directory, fsync=fsync)) for _ in range(runs)]
        wall = min(timing.wall for timing, _ in timings) / SESSION_STEPS
        cpu = min(timing.cpu for timing, _ in timings) / SESSION_STEPS
        fsyncs = timings[0][1] / SESSION_STEPS
        rows.append(
            Row(
                "write-ahead",
                f"per step, event-log fsync {'on' if fsync else 'off'}",
                f"{cpu * 1000:.2f} ms CPU",
                f"{wall * 1000:.2f} ms wall, {fsyncs:.1f} fsyncs; best of {runs}",
            )
        )
    return rows


class _SayHi(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    body = (
        b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
        b"data: [DONE]\n\n"
    )

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)


def bench_oneshot(directory: Path, runs: int = 7) -> list[Row]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SayHi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    workspace = directory / "ws"
    workspace.mkdir(exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "tui_agent",
        "-p",
        "say hi",
        "--provider",
        "openai",
        "--base-url",
        f"http://{host}:{port}/v1",
        "--model",
        "bench",
        "--workspace",
        str(workspace),
    ]
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench", "TUI_AGENT_HOME": str(directory / "home")}
    walls, cpus, rss = [], [], []
    for _ in range(runs):
        wall = time.perf_counter()
        with subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, env=env
        ) as proc:
            _, status, usage = os.wait4(proc.pid, 0)
            out = proc.stdout.read() if proc.stdout else b""
        walls.append(time.perf_counter() - wall)
        cpus.append(usage.ru_utime + usage.ru_stime)
        rss.append(usage.ru_maxrss / 1024)
        assert status == 0 and out == b"hi\n", (status, out)
    server.shutdown()
    return [
        Row(
            "one-shot",
            "tui-agent -p 'say hi': wall",
            f"{statistics.median(walls):.3f} s",
            "target < 0.34 s",
        ),
        Row("one-shot", "CPU", f"{statistics.median(cpus):.3f} s", "target < 0.38 s"),
        Row("one-shot", "peak RSS", f"{statistics.median(rss):.0f} MiB", "target < 203 MiB"),
    ]


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="tui-agent-bench-") as name:
        directory = Path(name)
        if sys.argv[1:] == ["write-ahead"]:
            print_table(bench_write_ahead(directory))
            return
        if sys.argv[1:] == ["torn-tail"]:
            print_table(bench_torn_tail(directory))
            return
        print_table(
            [
                # First: a child forked from a parent that already folded 100,000 events
                # would report the parent's pages in its peak RSS.
                *bench_oneshot(directory),
                *bench_fold(directory),
                *bench_append(directory),
                *bench_session(directory),
                *bench_write_ahead(directory),
                *bench_torn_tail(directory),
            ]
        )


if __name__ == "__main__":
    main()
