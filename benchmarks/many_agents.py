"""Many agents at once: 8 `task` sub-agents streaming and running tools while the person types.

The real app, headless (`App.run_test`, as `benchmarks/ui.py` runs it), on the real loop
(`build_loop`) with a scripted model that answers from the request: the main agent's first
step calls `task` 8 times; each sub-agent then takes `--steps` steps, each streaming a short
text in chunks with a small delay and then calling 2-4 tools (`read_file`, `grep`, `shell`
with output), and answers. Prints a table:

- key echo while the 8 run, a key every 100 ms (from the key entering the app's queue to the
  first screen refresh that shows it; the helpers of `benchmarks/ui.py`), p50/p95, wall / CPU;
- how often the tools pane's picture changes while they work: the pane's lines as the
  compositor painted them, counted when they differ from the lines it painted before, per
  second of the run;
- CPU time of the whole process per completed step (every agent's steps, from the prompt to
  the answer), next to the same job done by one sub-agent alone and by the main agent itself
  (the same steps, same tools). A run without typing, so keys do not count as steps' work;
  the idle app's own CPU (measured first, per second) is taken off each run's figure;
- that nothing was lost: every tool call of every agent started and finished, each task's
  answer reached the main agent.

Run: `.venv/bin/python benchmarks/many_agents.py [--quick] [--runs N]` (targets: echo p95
< 30 ms; tools pane >= 10 updates/s; CPU per step with 8 agents <= 1.5x one agent's). For a
"before" figure, run it against another tree: `PYTHONPATH=/tmp/tree .venv/bin/python ...`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

# Appended, not prepended: a tree named in PYTHONPATH (a "before" side) is imported first.
sys.path.append(str(Path(__file__).resolve().parents[1]))

from rich.segment import Segment
from textual.geometry import Region
from textual.strip import Strip

from benchmarks.ui import percentile, press_and_wait
from tui_agent.context import EventLog
from tui_agent.llm import ScriptedProvider, ScriptStep
from tui_agent.llm._scripted import ScriptToolCall
from tui_agent.loop import events as ev
from tui_agent.loop.api import LoopApi, LoopInfo
from tui_agent.loop.factory import build_loop
from tui_agent.loop.subagent import SUBAGENT_PROMPT
from tui_agent.ui.app import TuiAgentApp
from tui_agent.vocab import LLMRequest

AGENTS = 8
WORDS = ("reading", "the", "module", "to", "see", "where", "events", "reach", "the", "screen")
Mode = Literal["fan-out", "one sub-agent", "main agent"]


@dataclass(frozen=True)
class Job:
    """What each worker does: `steps` steps of text and tool calls, then its answer."""

    steps: int
    text_chars: int = 240
    chunk_chars: int = 12
    chunk_delay_s: float = 0.01


def _call(name: str, **arguments: Any) -> ScriptToolCall:
    return ScriptToolCall(name=name, arguments=json.dumps(arguments))


def worker_calls(step: int) -> tuple[ScriptToolCall, ...]:
    """2, 3 or 4 calls, the same for a given step whoever runs it."""
    calls = [
        _call("read_file", path=f"src/mod{step % 5}.py"),
        _call("grep", pattern=f"def handler_{step % 7}", path="src"),
    ]
    if step % 3 >= 1:
        calls.append(_call("shell", command=f"printf 'step {step}\\nline two\\nline three\\n'"))
    if step % 3 == 2:
        calls.append(_call("read_file", path=f"src/mod{(step + 2) % 5}.py", limit=40))
    return tuple(calls)


def text_of(chars: int, seed: int) -> str:
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < chars:
        words.append(WORDS[(seed + len(words)) % len(WORDS)])
    return " ".join(words) + ".\n"


@dataclass
class Model:
    """Answers from the request alone, so concurrent agents sharing it stay deterministic: a
    sub-agent's request carries the sub-agent prompt, and its step is the number of assistant
    messages it holds."""

    mode: Mode
    job: Job
    requests: int = 0
    calls: int = 0

    def __call__(self, request: LLMRequest) -> ScriptStep:
        self.requests += 1
        step = sum(1 for m in request.messages if m.role == "assistant")
        child = SUBAGENT_PROMPT in request.system
        if child or self.mode == "main agent":
            return self._work(step)
        if step == 0:
            count = AGENTS if self.mode == "fan-out" else 1
            tasks = tuple(
                _call("task", description=f"job {n}", prompt=f"JOB {n}: look around")
                for n in range(count)
            )
            self.calls += count
            return ScriptStep(tool_calls=tasks, chunk_delay_s=0)
        return ScriptStep(text="All jobs are done.", chunk_delay_s=0)

    def _work(self, step: int) -> ScriptStep:
        job = self.job
        text = text_of(job.text_chars, step)
        if step >= job.steps:
            return self._step(f"Report: {text}", ())
        calls = worker_calls(step)
        self.calls += len(calls)
        return self._step(text, calls)

    def _step(self, text: str, calls: tuple[ScriptToolCall, ...]) -> ScriptStep:
        job = self.job
        return ScriptStep(
            text=text,
            tool_calls=calls,
            chunk_chars=job.chunk_chars,
            chunk_delay_s=job.chunk_delay_s,
        )


def make_workspace(root: Path) -> Path:
    workspace = root / "ws"
    (workspace / "src").mkdir(parents=True)
    for n in range(5):
        body = "".join(f"def handler_{k}(event):\n    return event.value * {k}\n" for k in range(7))
        (workspace / "src" / f"mod{n}.py").write_text(body * 3, encoding="utf-8")
    return workspace


async def open_model_loop(model: Model, root: Path) -> LoopApi:
    workspace = make_workspace(root)
    provider = ScriptedProvider(model)
    state = root / "session"
    state.mkdir()
    return await build_loop(
        provider=provider,
        info=LoopInfo(
            provider="scripted",
            model=provider.model,
            context_window=200_000,
            approval_mode="yolo",
            session_id="many-agents",
            workspace=str(workspace),
            demo=False,
        ),
        workspace=workspace,
        spill_dir=state / "spill",
        log=EventLog(state / "events.jsonl"),
        system_prompt=lambda tools: "You are a benchmark agent.",
    )


@dataclass
class PaneFrames:
    """The tools pane's lines as the compositor painted them: a paint whose lines differ from
    the ones painted before is a visible update."""

    lines: dict[int, str] = field(default_factory=dict)
    changes: list[float] = field(default_factory=list)
    paints: int = 0

    def follow(self, app: TuiAgentApp) -> None:
        pane = app.tools_pane
        render_lines = pane.render_lines

        def painted(crop: Region) -> list[Strip]:
            strips = render_lines(crop)
            self.paints += 1
            changed = False
            for y, strip in enumerate(strips, crop.y):
                text = "".join(s.text for s in strip if isinstance(s, Segment))
                if self.lines.get(y) != text:
                    self.lines[y] = text
                    changed = True
            if changed:
                self.changes.append(time.perf_counter())
            return strips

        pane.render_lines = painted  # type: ignore[method-assign]


@dataclass
class Run:
    mode: Mode
    steps: int  # completed steps, every agent's
    calls: int  # tool calls the model asked for, `task` included
    finished: int  # tool calls that reached `tool.finished` (the main's) or the task's row
    wall: float
    cpu: float
    echoes: list[tuple[float, float]]
    pane_rate: float
    paints: int
    lost: list[str]


async def run_once(mode: Mode, job: Job, typing: bool, idle_cpu_per_s: float) -> Run:
    model = Model(mode, job)
    with tempfile.TemporaryDirectory() as tmp:
        loop = await open_model_loop(model, Path(tmp))
        app = TuiAgentApp(loop)
        frames = PaneFrames()
        finished: list[str] = []
        echoes: list[tuple[float, float]] = []
        lost: list[str] = []

        def on_event(event: ev.LoopEvent) -> None:
            if isinstance(event, ev.ToolFinished):
                finished.append(event.id)

        unsubscribe = loop.subscribe(on_event)
        try:
            async with app.run_test(size=(120, 40)) as pilot:
                await pilot.pause()
                frames.follow(app)
                wall, cpu = time.perf_counter(), time.process_time()
                handle = await loop.submit("Run the jobs.")
                result = asyncio.ensure_future(handle.result())
                n = 0
                while not result.done():
                    if typing:
                        await asyncio.sleep(0.1)
                        echoes.append(await press_and_wait(app, "abcdefghij"[n % 10]))
                        n += 1
                        if n % 50 == 0:
                            app.prompt_input.clear_input()
                    else:
                        await asyncio.wait({result}, timeout=0.5)
                outcome = await result
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                await pilot.pause()
                if outcome.type != "completed":
                    lost.append(f"turn {outcome.type}")
                if app.vm.tools:
                    lost.append(f"{len(app.vm.tools)} rows left in the tools pane")
                lost += subagent_losses(app, loop, mode, job)
        finally:
            unsubscribe()
            await loop.close()
    steps = model.requests
    net_cpu = max(cpu - idle_cpu_per_s * wall, 0.0)
    return Run(
        mode,
        steps,
        model.calls,
        len(finished),
        wall,
        net_cpu,
        echoes,
        len(frames.changes) / wall,
        frames.paints,
        lost,
    )


def subagent_losses(app: TuiAgentApp, loop: LoopApi, mode: Mode, job: Job) -> list[str]:
    """Every task's answer reached the main agent, and each child's tool calls all ended."""
    lost: list[str] = []
    if mode == "main agent":
        return lost
    tasks = [b for b in app.vm.blocks if getattr(b, "name", None) == "task"]
    expected = sum(len(worker_calls(s)) for s in range(job.steps))
    for block in tasks:
        run = loop.subagent(block.call_id)  # type: ignore[union-attr]
        if run is None:
            lost.append(f"{block.call_id}: no sub-agent")  # type: ignore[union-attr]
            continue
        started = {e.id for e in run.transcript if isinstance(e, ev.ToolStarted)}
        ended = {e.id for e in run.transcript if isinstance(e, ev.ToolFinished)}
        if len(started) != expected or started != ended:
            lost.append(f"{run.call_id}: {len(started)} calls started, {len(ended)} ended")
        if not block.output.startswith("Report:"):  # type: ignore[union-attr]
            lost.append(f"{run.call_id}: no report")
    return lost


async def idle_cpu(seconds: float) -> float:
    """CPU per second of the app on an idle loop: taken off each run's CPU."""
    model = Model("main agent", Job(steps=0))
    with tempfile.TemporaryDirectory() as tmp:
        loop = await open_model_loop(model, Path(tmp))
        app = TuiAgentApp(loop)
        try:
            async with app.run_test(size=(120, 40)) as pilot:
                await pilot.pause(0.5)
                cpu, wall = time.process_time(), time.perf_counter()
                await asyncio.sleep(seconds)
                return (time.process_time() - cpu) / (time.perf_counter() - wall)
        finally:
            await loop.close()


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def ms(value: float) -> str:
    return f"{value * 1000:.1f} ms"


def table(rows: list[tuple[str, str, str, str]]) -> None:
    print(f"{'measure':<58} {'value':>22} {'against':>16}  target", flush=True)
    print("-" * 112, flush=True)
    for measure, value, against, target in rows:
        print(f"{measure:<58} {value:>22} {against:>16}  {target}", flush=True)


def median_run(runs: list[Run], key: Callable[[Run], float]) -> float:
    return statistics.median(key(r) for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 steps per agent, 1 run")
    parser.add_argument("--steps", type=int, default=20, help="steps of each sub-agent")
    parser.add_argument("--runs", type=int, default=2, help="alternating runs of each mode")
    args = parser.parse_args()
    steps, runs = (8, 1) if args.quick else (args.steps, args.runs)
    job = Job(steps=steps)
    os.environ.setdefault("TUI_AGENT_HOME", tempfile.mkdtemp())
    print(f"load average: {load_average()}", flush=True)

    idle = asyncio.run(idle_cpu(2.0))
    typed = asyncio.run(run_once("fan-out", job, typing=True, idle_cpu_per_s=idle))
    cpu_runs: dict[Mode, list[Run]] = {"fan-out": [], "one sub-agent": [], "main agent": []}
    for _ in range(runs):  # alternating, so load that comes and goes hits every mode
        for mode in cpu_runs:
            cpu_runs[mode].append(asyncio.run(run_once(mode, job, False, idle)))

    def per_step(mode: Mode) -> float:
        return median_run(cpu_runs[mode], lambda r: r.cpu / r.steps)

    fan, alone, main_agent = per_step("fan-out"), per_step("one sub-agent"), per_step("main agent")
    echo_wall = [w for w, _ in typed.echoes]
    echo_cpu = [c for _, c in typed.echoes]
    lost = [f"{r.mode}: {x}" for rs in ([typed], *cpu_runs.values()) for r in rs for x in r.lost]
    p95 = percentile(echo_wall, 0.95) if echo_wall else float("nan")
    rows = [
        (
            f"key echo, {AGENTS} sub-agents x {steps} steps: p50 (wall / CPU)",
            f"{ms(percentile(echo_wall, 0.5))} / {ms(percentile(echo_cpu, 0.5))}",
            "",
            "",
        ),
        (
            f"key echo p95 ({len(echo_wall)} keys)",
            f"{ms(p95)} / {ms(percentile(echo_cpu, 0.95))}",
            "",
            "< 30 ms " + ("✓" if p95 < 0.030 else "✗"),
        ),
        (
            "tools pane: visible updates per second (typing run)",
            f"{typed.pane_rate:.1f}/s",
            f"{typed.paints} paints",
            ">= 10/s " + ("✓" if typed.pane_rate >= 10 else "✗"),
        ),
        (
            "  the same, run without typing (median)",
            f"{median_run(cpu_runs['fan-out'], lambda r: r.pane_rate):.1f}/s",
            "",
            "",
        ),
        ("idle app CPU (taken off the figures below)", f"{idle * 100:.1f} % of a core", "", ""),
        (
            f"CPU per step, {AGENTS} sub-agents at once",
            ms(fan),
            f"{fan / alone:.2f}x alone",
            "<= 1.5x " + ("✓" if fan <= 1.5 * alone else "✗"),
        ),
        ("CPU per step, one sub-agent alone (same steps)", ms(alone), "reference", ""),
        (
            "CPU per step, the main agent doing the job itself",
            ms(main_agent),
            f"{fan / main_agent:.2f}x (8 at once)",
            "",
        ),
        (
            "wall, 8 at once / one alone / main agent (median, s)",
            " / ".join(f"{median_run(cpu_runs[m], lambda r: r.wall):.1f}" for m in cpu_runs),
            "",
            "",
        ),
        (
            "steps and tool calls per run (8 at once)",
            f"{cpu_runs['fan-out'][0].steps} / {cpu_runs['fan-out'][0].calls}",
            "",
            "",
        ),
        ("lost (calls not ended, answers missing)", str(len(lost)), "", "0 " + "✓✗"[bool(lost)]),
    ]
    table(rows)
    for line in lost:
        print(f"  lost: {line}")
    print(f"load average: {load_average()}", flush=True)


if __name__ == "__main__":
    main()
