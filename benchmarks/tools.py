"""Tool throughput: parallel reads, scheduler overhead, and grep against GNU grep.

Prints a table:
- 16 independent `read_file` calls on 1 MB files through the batch executor, in one batch
  (parallel) and one call per batch (serial), and the speed-up. Each call reads the last lines
  (offset near the end), so the whole megabyte is scanned;
- scheduler overhead per task for 10,000 tiny tasks (no accesses; reads of distinct files; a
  chain of 1,000 writes to one path), next to bare asyncio tasks doing the same nothing;
- executor overhead per call for a batch of 1,000 calls of a tool that answers at once;
- on a generated tree of 100,000 files (plus 20,000 in .gitignore'd folders): `grep` for a
  literal and for a regex and `glob` of every file, through ripgrep, through our own Python
  walker (the fallback when `rg` is missing), through round 1's tools (commit 229a6ca, the
  in-process Python search the issue measures against, extracted with `git archive` and run
  in a child process: `round1_search.py`) and as `grep -r` / `find` do it; then the @ file
  index: listing the tree and the slowest keystroke of a completion. Each search figure is
  wall / CPU (the process that searched plus the children it waited for), best of 5, the four
  engines taking turns within each round so that the ratios compare like with like.

Everything runs in a temporary folder. Run: `.venv/bin/python benchmarks/tools.py`, or
`.venv/bin/python benchmarks/tools.py search` for the search rows alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from round1_search import cpu_seconds

from tui_agent.session import FileIndex
from tui_agent.tools import (
    Approvals,
    BatchExecutor,
    CallContext,
    Glob,
    Grep,
    Tool,
    ToolAccesses,
    ToolArgs,
    ToolContext,
    ToolRegistry,
    ToolScheduler,
    Workspace,
    default_registry,
)
from tui_agent.tools import _search as search_module
from tui_agent.vocab import AbortSignal, ToolCall, ToolResult

ROUNDS = 3
READS = 16
FILE_BYTES = 1_000_000
TINY_TASKS = 10_000
CHAIN = 1_000
BATCH_CALLS = 1_000
SEARCH_FILES = 100_000
IGNORED = 20_000  # in .gitignore'd folders (node_modules/, build/)
SEARCH_ROUNDS = 5
ROUND1 = "229a6ca"  # the code issue 18 was filed against


def best(samples: list[float]) -> float:
    return min(samples)


def context() -> CallContext:
    return CallContext(AbortSignal(), lambda u: None, lambda a: None, lambda s: None)


async def drain(executor: BatchExecutor, calls: list[ToolCall]) -> list[ToolResult]:
    batch = [(call, context()) for call in calls]
    return [result async for _, result in executor.execute(batch, AbortSignal())]


# --- reads -------------------------------------------------------------------------------------


async def bench_reads(root: Path) -> tuple[float, float]:
    line = "x" * 95 + "\n"
    lines = FILE_BYTES // len(line)
    for i in range(READS):
        (root / f"big{i}.txt").write_text(line * lines)
    workspace = Workspace(root)
    executor = BatchExecutor(
        default_registry(workspace), workspace, Approvals("yolo"), root / "spill", abort_grace_s=2.0
    )
    args = json.dumps({"offset": lines - 50, "limit": 50})
    calls = [
        ToolCall(
            id=f"r{i}",
            name="read_file",
            arguments=args.replace("{", f'{{"path": "big{i}.txt", ', 1),
        )
        for i in range(READS)
    ]
    parallel, serial = [], []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        results = await drain(executor, calls)
        parallel.append(time.perf_counter() - start)
        assert not any(r.is_error for r in results), results[0].text
        start = time.perf_counter()
        for call in calls:
            await drain(executor, [call])
        serial.append(time.perf_counter() - start)
    return best(parallel), best(serial)


# --- scheduler ---------------------------------------------------------------------------------


async def nothing() -> None:
    return None


async def time_scheduler(accesses: Callable[[int], ToolAccesses], count: int) -> float:
    scheduler = ToolScheduler()
    start = time.perf_counter()
    futures = [scheduler.add(accesses(i), nothing) for i in range(count)]
    await asyncio.gather(*futures)
    return time.perf_counter() - start


async def time_bare(count: int) -> float:
    start = time.perf_counter()
    await asyncio.gather(*(asyncio.ensure_future(nothing()) for _ in range(count)))
    return time.perf_counter() - start


async def bench_scheduler() -> dict[str, float]:
    runs: dict[str, Callable[[], Awaitable[float]]] = {
        "bare": lambda: time_bare(TINY_TASKS),
        "none": lambda: time_scheduler(lambda i: ToolAccesses.none(), TINY_TASKS),
        "reads": lambda: time_scheduler(lambda i: ToolAccesses.read_file(f"/f{i}"), TINY_TASKS),
        "chain": lambda: time_scheduler(lambda i: ToolAccesses.write_file("/same"), CHAIN),
    }
    out: dict[str, float] = {}
    for name, run in runs.items():
        gc.collect()
        out[name] = best([await run() for _ in range(ROUNDS)])
    return out


class _NoArgs(ToolArgs):
    pass


class _Instant(Tool[_NoArgs]):
    name = "instant"
    description = "answers at once"
    Args = _NoArgs
    read_only = True

    def accesses(self, args: _NoArgs) -> ToolAccesses:
        return ToolAccesses.none()

    async def execute(self, args: _NoArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output="ok")


async def bench_executor(root: Path) -> float:
    workspace = Workspace(root)
    executor = BatchExecutor(
        ToolRegistry([_Instant()]), workspace, Approvals("ask"), root / "s", abort_grace_s=2.0
    )
    calls = [ToolCall(id=f"c{i}", name="instant", arguments="{}") for i in range(BATCH_CALLS)]
    samples = []
    for _ in range(ROUNDS):
        gc.collect()
        start = time.perf_counter()
        results = await drain(executor, calls)
        samples.append(time.perf_counter() - start)
        assert len(results) == BATCH_CALLS
    return best(samples)


# --- search: grep, glob and the @ index on a 100,000-file tree ------------------------------


def make_tree(root: Path) -> None:
    """SEARCH_FILES source files in 1,000 folders, plus IGNORED files in .gitignore'd folders."""
    body = "".join(f"line {n}: some ordinary source text, nothing to see here\n" for n in range(20))
    (root / ".gitignore").write_text("node_modules/\nbuild/\n")
    for i in range(SEARCH_FILES):
        folder = root / f"pkg{i // 100:03}"
        if i % 100 == 0:
            folder.mkdir(parents=True)
        extra = f"def needle_{i}(): pass\n" if i % 50 == 0 else ""
        (folder / f"mod{i % 100:03}.py").write_text(body + extra)
    for i in range(IGNORED):
        folder = root / ("node_modules" if i % 2 else "build") / f"dep{i // 200:03}"
        if i % 200 < 2:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{i}.js").write_text(body + "def needle_ignored(): pass\n")


@dataclass(frozen=True)
class Cost:
    """Wall-clock seconds, and CPU seconds of this process and of the children it waited for
    (ripgrep, grep, find, the Python search worker): on a shared machine CPU is the steadier."""

    wall: float
    cpu: float

    @staticmethod
    def best(samples: list[Cost]) -> Cost:
        return Cost(min(s.wall for s in samples), min(s.cpu for s in samples))

    def ms(self) -> str:
        return f"{self.wall * 1e3:,.0f} / {self.cpu * 1e3:,.0f} ms"

    def speed_up(self, other: Cost) -> str:
        """How many times faster this is than `other`, wall / CPU."""
        return f"{other.wall / self.wall:.1f}x / {other.cpu / self.cpu:.1f}x"


async def sample(action: Callable[[], Awaitable[object]]) -> Cost:
    gc.collect()
    wall, cpu = time.perf_counter(), cpu_seconds()
    await action()
    return Cost(time.perf_counter() - wall, cpu_seconds() - cpu)


async def command(argv: list[str], root: Path) -> None:
    await asyncio.to_thread(subprocess.run, argv, cwd=root, capture_output=True, check=False)


class Round1:
    """Round 1's `grep` and `glob` (commit ROUND1), in a child process that imports that
    commit's `tui_agent` package and reports the cost of each call (`round1_search.py`)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process

    @staticmethod
    @contextlib.contextmanager
    def start(root: Path) -> Iterator[Round1 | None]:
        """The child, or None (said on stderr) where git cannot give round 1's code."""
        here = Path(__file__).resolve().parent
        with tempfile.TemporaryDirectory() as old:
            missing = Round1.extract(here.parent, old)
            if missing:
                print(
                    f"Round 1's code ({ROUND1}) is out of reach, its column is skipped: {missing}",
                    file=sys.stderr,
                )
                yield None
                return
            process = subprocess.Popen(
                [sys.executable, str(here / "round1_search.py"), str(root)],
                env={**os.environ, "PYTHONPATH": old},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            try:
                imported = json.loads(process.stdout.readline()) if process.stdout else None
                if not str(imported).startswith(old + os.sep):
                    raise RuntimeError(f"round 1's worker imported tui_agent from {imported}")
                yield Round1(process)
            finally:
                if process.stdin:
                    process.stdin.close()
                process.wait()

    @staticmethod
    def extract(repository: Path, into: str) -> str | None:
        """Round 1's `tui_agent` package from git into `into`; else why not."""
        try:
            archive = subprocess.run(
                ["git", "archive", ROUND1, "tui_agent"],
                cwd=repository,
                capture_output=True,
                check=True,
            )
            subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)
        except (OSError, subprocess.CalledProcessError) as error:
            said = getattr(error, "stderr", None)
            return said.decode(errors="replace").strip() if said else str(error)
        return None

    def run(self, tool: str, args: dict[str, Any]) -> tuple[Cost, str]:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps({"tool": tool, "args": args}) + "\n")
        self.process.stdin.flush()
        reply = json.loads(self.process.stdout.readline())
        if reply["is_error"]:
            raise RuntimeError(f"round 1's {tool} failed: {reply['text']}")
        return Cost(reply["wall"], reply["cpu"]), reply["text"]


Engines = tuple[Cost, Cost, Cost | None, Cost]


async def bench_search(root: Path) -> dict[str, Engines]:
    """(ripgrep, our Python walker, round 1 or None, grep -r / find) for each measure, best of
    SEARCH_ROUNDS.

    The four run in turn within each round, so a change in the machine's load falls on all
    alike. Round 1's output must be the same as ripgrep's: the same answer, found faster."""
    workspace = Workspace(root)
    ctx = ToolContext(AbortSignal(), lambda u: None, lambda a: None, workspace, "s")
    results: dict[str, Engines] = {}
    grep, glob = Grep(workspace), Glob(workspace)
    cases: dict[str, tuple[Tool[Any], dict[str, Any], list[str]]] = {
        "grep, a literal": (grep, {"pattern": "needle_4200"}, ["grep", "-rn", "needle_4200", "."]),
        "grep, a regex": (
            grep,
            {"pattern": r"def needle_\d+0\(\)"},
            ["grep", "-rnE", r"def needle_[0-9]+0\(\)", "."],
        ),
        "glob, every file": (glob, {"pattern": "**/*"}, ["find", ".", "-type", "f"]),
    }
    with Round1.start(root) as round1:
        for name, (tool, args, argv) in cases.items():
            samples: tuple[list[Cost], list[Cost], list[Cost], list[Cost]] = ([], [], [], [])
            outputs: list[ToolResult] = []

            async def call(
                tool: Tool[Any] = tool,
                args: dict[str, Any] = args,
                into: list[ToolResult] = outputs,
            ) -> None:
                into.append(await tool.execute(tool.Args.model_validate(args), ctx))

            for _ in range(SEARCH_ROUNDS):
                samples[0].append(await sample(call))
                with fallback():
                    samples[1].append(await sample(call))
                if round1 is not None:
                    cost, text = round1.run(tool.name, args)
                    assert text == outputs[0].text, f"{name}: round 1 answers otherwise"
                    samples[2].append(cost)
                samples[3].append(await sample(lambda argv=argv: command(argv, root)))
            assert len({r.text for r in outputs}) == 1 and not outputs[0].is_error, name
            fast, slow, old, gnu = (Cost.best(s) if s else None for s in samples)
            assert fast and slow and gnu
            results[name] = (fast, slow, old, gnu)
    return results


@contextlib.contextmanager
def fallback() -> Iterator[None]:
    """Within it, the tools run without ripgrep (our own walker and Python search)."""
    saved = search_module.rg_path
    search_module.rg_path = lambda: None  # type: ignore[assignment]
    try:
        yield
    finally:
        search_module.rg_path = saved  # type: ignore[assignment]


async def bench_completion(root: Path) -> tuple[Cost, Cost, int]:
    """Listing the tree for @ completion, and the slowest keystroke typing `@pkg042mod07`
    (each best of SEARCH_ROUNDS)."""
    index = FileIndex(root)
    listings = [await sample(index.load) for _ in range(SEARCH_ROUNDS)]
    query = "pkg042mod07"
    worst: list[Cost] = []
    for _ in range(SEARCH_ROUNDS):  # "p" after the whole query starts again from every entry
        keystrokes = []
        for end in range(1, len(query) + 1):
            wall, cpu = time.perf_counter(), time.process_time()
            index.match(query[:end])
            keystrokes.append(Cost(time.perf_counter() - wall, time.process_time() - cpu))
        worst.append(Cost(max(k.wall for k in keystrokes), max(k.cpu for k in keystrokes)))
    return Cost.best(listings), Cost.best(worst), len(index.entries)


def search_rows(root: Path) -> list[tuple[str, str, str]]:
    make_tree(root)
    search = asyncio.run(bench_search(root))
    listed, keystroke, entries = asyncio.run(bench_completion(root))
    tree = f"{SEARCH_FILES // 1000}k files + {IGNORED // 1000}k ignored"
    rows = [(f"search ({tree}), wall / CPU", "", f"best of {SEARCH_ROUNDS}")]
    for name, (fast, slow, old, gnu) in search.items():
        other = "find -type f" if name.startswith("glob") else "grep -r"
        rows.append((f"{name}: ripgrep", fast.ms(), ""))
        rows.append(("  our Python walker (the fallback)", slow.ms(), ""))
        rows.append((f"  round 1 ({ROUND1})", old.ms() if old else "skipped", ""))
        rows.append((f"  {other}", gnu.ms(), ""))
        if old:
            rows.append(("  speed-up vs round 1", fast.speed_up(old), "target >= 5x"))
        rows.append(("  speed-up vs the walker", fast.speed_up(slow), ""))
        rows.append((f"  speed-up vs {other}", fast.speed_up(gnu), "target > 1x"))
    rows.append((f"@ index: listing {entries:,} entries", listed.ms(), "rg --files"))
    rows.append(
        (
            "@ completion: slowest keystroke",
            f"{keystroke.wall * 1e3:.1f} / {keystroke.cpu * 1e3:.1f} ms",
            "target < 50 ms",
        )
    )
    return rows


def other_rows(base: Path) -> list[tuple[str, str, str]]:
    parallel, serial = asyncio.run(bench_reads(base / "reads"))
    sched = asyncio.run(bench_scheduler())
    batch = asyncio.run(bench_executor(base / "exec"))

    def us(seconds: float, count: int) -> str:
        return f"{seconds / count * 1e6:.1f} us/task"

    return [
        (f"{READS} x read_file of 1 MB, one batch", f"{parallel * 1e3:.1f} ms", ""),
        (f"{READS} x read_file of 1 MB, one by one", f"{serial * 1e3:.1f} ms", ""),
        ("  speed-up", f"{serial / parallel:.2f}x", "parallel vs serial"),
        (f"bare asyncio tasks ({TINY_TASKS:,})", us(sched["bare"], TINY_TASKS), "baseline"),
        (
            f"scheduler, no accesses ({TINY_TASKS:,})",
            us(sched["none"], TINY_TASKS),
            f"+{(sched['none'] - sched['bare']) / TINY_TASKS * 1e6:.1f} us over bare",
        ),
        (
            f"scheduler, distinct reads ({TINY_TASKS:,})",
            us(sched["reads"], TINY_TASKS),
            f"+{(sched['reads'] - sched['bare']) / TINY_TASKS * 1e6:.1f} us over bare",
        ),
        (f"scheduler, one-path write chain ({CHAIN:,})", us(sched["chain"], CHAIN), "serial"),
        (f"executor, batch of {BATCH_CALLS:,} instant calls", us(batch, BATCH_CALLS), "per call"),
    ]


def main() -> None:
    only_search = sys.argv[1:] == ["search"]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for name in ("reads", "exec", "search"):
            (base / name).mkdir()
        rows = [] if only_search else other_rows(base)
        rows += search_rows(base / "search")
    width = max(len(r[0]) for r in rows)
    print(f"{'measure'.ljust(width)}  {'result':>20}  note")
    print(f"{'-' * width}  {'-' * 20}  {'-' * 24}")
    for name, value, note in rows:
        print(f"{name.ljust(width)}  {value:>20}  {note}")


if __name__ == "__main__":
    main()
