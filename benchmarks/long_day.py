"""A long day: a 1,000-turn session built through the real loop, its last turns lived by the
real app, and what the end of it costs.

The session is opened as the command line opens it (`session.open_loop`: a session under a
temporary `TUI_AGENT_HOME`, the event log, the sandbox) in a temporary workspace of 300 Python
files. The model is a step author that answers from the request alone (`ScriptedProvider` with a
function): each turn reads two files and greps (or, in 20 turns of 1,000, starts a `task`
sub-agent instead of the second read), then edits the file it read (a diff) and runs a shell
command with some output, then answers in Markdown: 5 tool calls a turn, streamed in
64-character chunks with no delay; the tools really run. Five compactions (`/compact`).

The first turns go through the loop without a screen (in the app every turn costs 1.5-2 s of
CPU in frames on this 2-core machine, which would make the day take hours), in a child process,
so that the figures at the end (RSS above all) are those of a process that resumed the session
and lived its last turns, as a person's would be; then the real
`TuiAgentApp`, headless (`run_test`), resumes the session and lives the last `--app-turns`
(default 100, with the last compaction and sub-agent tasks): the harness submits each prompt as a
person does (text in the prompt input, Enter). At the end of that app's life: key echo (idle,
while a new 10 KB Markdown answer streams, and after PageUp, Home and End), RSS, and CPU over a
stretch of idleness from a second after the last key (with the process's voluntary context
switches: its wake-ups), also over its part after the prompt's cursor stops blinking. A fresh app
(same harness, an empty session) is measured the same way before and after the day, in the same
process; ratios are against their median. Then `benchmarks/long_day_resume.py`: resuming, the
fold, the export (`--no-resume` leaves it out).

Run: `.venv/bin/python benchmarks/long_day.py [--turns 1000] [--app-turns 100] [--idle-s 20]`;
`--quick` is 60 turns, 20 of them in the app (a few minutes on a loaded machine). With
`PYTHONPATH=<another tree>` the app and loop of that tree are measured (its `benchmarks`
helpers too), e.g. the session's starting code, with `--no-resume` if it has no venv. Targets
(issue 29): echo p95 ≤ 1.2× fresh, RSS ≤ 200 MB, idle CPU ≤ 0.5 % of a core, resume first frame
≤ 1 s and no stall over 50 ms, export ≤ 3 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if "PYTHONPATH" not in os.environ:  # with it (`PYTHONPATH=<other tree>`), that tree's code
    sys.path.insert(0, str(ROOT))
# The headless part runs in a child process (`--headless-part`), which must use the same home.
HOME = Path(os.environ.get("LONG_DAY_HOME") or tempfile.mkdtemp(prefix="long-day-home-"))
os.environ["LONG_DAY_HOME"] = str(HOME)
os.environ["TUI_AGENT_HOME"] = str(HOME)  # before anything reads where sessions live
for _name in [n for n in os.environ if n.startswith(("OPENAI", "ANTHROPIC", "TEXTUAL_"))]:
    del os.environ[_name]

from textual.pilot import Pilot  # noqa: E402

from benchmarks.long_day_resume import SIZE, Resumed, config_for, resume, until  # noqa: E402
from benchmarks.ui import markdown_answer, percentile, press_and_wait  # noqa: E402
from tui_agent.context import SUMMARY_INSTRUCTIONS  # noqa: E402
from tui_agent.llm import Provider, ScriptedProvider, ScriptStep  # noqa: E402
from tui_agent.llm._scripted import ScriptToolCall  # noqa: E402
from tui_agent.session import _open as session_open  # noqa: E402
from tui_agent.session import open_loop  # noqa: E402
from tui_agent.ui.app import TuiAgentApp  # noqa: E402
from tui_agent.ui.state import MarkerBlock, TextBlock  # noqa: E402
from tui_agent.ui.widgets.prompt_input import BLINK_FOR_S  # noqa: E402
from tui_agent.vocab import LLMRequest  # noqa: E402

FILES = 300
CHUNK = 64
MARK = re.compile(r"\[(day|job|stream) (\d+)\]")
COUNTER = re.compile(r"^COUNTER = (\d+)$", re.MULTILINE)


def make_workspace(root: Path) -> None:
    """300 modules of about 40 lines in 10 packages."""
    for i in range(FILES):
        path = root / "src" / f"pkg{i // 30}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [f'"""Module {i}."""', "", "COUNTER = 0", ""]
        for f in range(12):
            lines += [f"def func_{f}_{i}(value):", f"    return value * {f} + {i}", ""]
        path.write_text("\n".join(lines), encoding="utf-8")


def module(n: int) -> str:
    return f"src/pkg{(n % FILES) // 30}/mod{n % FILES}.py"


def call(name: str, **arguments: object) -> ScriptToolCall:
    return ScriptToolCall(name=name, arguments=json.dumps(arguments))


@dataclass
class DayModel:
    """Answers each request from its own messages (and the workspace it reads to edit): the
    latest user message tagged `[day N]`, `[job N]` or `[stream N]` says what to do, the count
    of assistant messages after it says which step this is."""

    workspace: Path
    answered: int = 0  # turns whose final answer was served
    summaries: int = 0
    calls: int = 0  # tool calls asked for (a sub-agent's included)
    jobs: int = 0  # sub-agent tasks started
    stream_delay_s: float = 0.005
    log: list[str] = field(default_factory=list)

    def __call__(self, request: LLMRequest) -> ScriptStep:
        step = self._answer(request)
        self.calls += len(step.tool_calls)
        self.jobs += sum(c.name == "task" for c in step.tool_calls)
        return step

    def _answer(self, request: LLMRequest) -> ScriptStep:
        if request.system == SUMMARY_INSTRUCTIONS:
            self.summaries += 1
            text = f"## Summary {self.summaries}\n\nThe user asks for module edits; all done."
            return ScriptStep(text=text, chunk_delay_s=0, chunk_chars=CHUNK)
        for index in range(len(request.messages) - 1, -1, -1):
            message = request.messages[index]
            found = MARK.search(message.text) if message.role == "user" else None
            if found:
                break
        else:
            return ScriptStep(text="Nothing asked.", chunk_delay_s=0)
        step = sum(m.role == "assistant" for m in request.messages[index + 1 :])
        kind, n = found.group(1), int(found.group(2))
        if kind == "job":
            return self._job(n, step)
        if kind == "stream":
            self.answered += 1
            text = markdown_answer() + f"\n\n[done stream {n}]"
            return ScriptStep(text=text, chunk_delay_s=self.stream_delay_s, chunk_chars=8)
        return self._turn(n, step)

    def _turn(self, n: int, step: int) -> ScriptStep:
        path = module(n)
        if step == 0:
            third = (
                call("task", description=f"Survey module {n}", prompt=f"[job {n}] Read it.")
                if n % 50 == 25
                else call("read_file", path=module(n * 7 + 3))
            )
            return ScriptStep(
                thinking=f"Turn {n}: read {path}, find its callers, then change it.",
                text=f"Looking at `{path}`.",
                tool_calls=(
                    call("read_file", path=path),
                    call("grep", pattern=f"def func_{n % 12}_", path=f"src/pkg{n % 10}"),
                    third,
                ),
                chunk_delay_s=0,
                chunk_chars=CHUNK,
            )
        if step == 1:
            found = COUNTER.search((self.workspace / path).read_text(encoding="utf-8"))
            value = int(found.group(1)) if found else 0
            edit = call(
                "edit_file",
                path=path,
                old_string=f"COUNTER = {value}",
                new_string=f"COUNTER = {value + 1}",
            )
            shell = call("shell", command=f"wc -l src/pkg{n % 10}/*.py | tail -n 20; seq {n % 40}")
            return ScriptStep(
                text="Now the change.", tool_calls=(edit, shell), chunk_delay_s=0, chunk_chars=CHUNK
            )
        self.answered += 1
        text = (
            f"Turn {n}: `{path}` now counts one more.\n\n- read it and `{module(n * 7 + 3)}`\n"
            f"- grepped `func_{n % 12}_` in `src/pkg{n % 10}`\n\n"
            f"```python\nCOUNTER += 1\n```\n\n[done {n}]"
        )
        return ScriptStep(text=text, chunk_delay_s=0, chunk_chars=CHUNK)

    def _job(self, n: int, step: int) -> ScriptStep:
        if step == 0:
            return ScriptStep(
                text="Reading.", tool_calls=(call("read_file", path=module(n)),), chunk_delay_s=0
            )
        return ScriptStep(text=f"Module {n} has 12 functions and a counter.", chunk_delay_s=0)


def use_model(model: DayModel) -> None:
    """`open_loop` builds the provider from the flags; here it is the day's step author."""

    def provider(*_: object) -> Provider:
        return ScriptedProvider(model)

    session_open._provider = provider  # type: ignore[assignment]


async def submit(pilot: Pilot[None], text: str) -> None:
    """Text into the prompt input at once (typing 1,000 prompts key by key is not the point)."""
    app = pilot.app
    assert isinstance(app, TuiAgentApp)
    app.prompt_input.insert(text)
    await pilot.press("enter")


def answered(app: TuiAgentApp, marker: str) -> Callable[[], bool]:
    def check() -> bool:
        last = app.vm.blocks[-1] if app.vm.blocks else None
        return not app.vm.busy and isinstance(last, TextBlock) and marker in last.text

    return check


def compactions(app: TuiAgentApp) -> int:
    return sum(isinstance(b, MarkerBlock) and b.kind == "compacted" for b in app.vm.blocks)


def prompt(n: int) -> str:
    return f"[day {n}] Please bump the counter of module {n % FILES}."


def compactions_after(turns: int, app_turns: int) -> set[int]:
    """Five over the day, the last one in the part the app lives."""
    return {round(turns * k / 6) for k in range(1, 5)} | {turns - app_turns // 2}


def headless_in_child(workspace: Path, script: Path, args: argparse.Namespace) -> dict[str, float]:
    """`headless_part` in a child process, so that what the app's process measures at the end
    (its RSS above all) is what a person who resumed the session and lived the last turns in
    the app would see, not the remains of the turns before. Returns the child's figures."""
    figures = script.parent / f"{script.stem}-headless.json"
    argv = [sys.executable, __file__, "--headless-part", str(workspace), str(script)]
    argv += ["--turns", str(args.turns), "--app-turns", str(args.app_turns)]
    subprocess.run(argv, check=True)
    result: dict[str, float] = json.loads(figures.read_text(encoding="utf-8"))
    return result


def headless_child(args: argparse.Namespace) -> None:
    """The child's side of `headless_in_child`: the turns, then their figures in a file."""
    workspace, script = (Path(p) for p in args.headless_part)
    model = DayModel(workspace)
    use_model(model)
    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(headless_part(workspace, script, args))
    figures = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}
    figures |= {"calls": model.calls, "jobs": model.jobs, "summaries": model.summaries}
    (script.parent / f"{script.stem}-headless.json").write_text(json.dumps(figures))


async def headless_part(workspace: Path, script: Path, args: argparse.Namespace) -> None:
    """The day's turns before the app's part, through the same loop without a screen (the
    app's own frames would make a 1,000-turn day take hours on this machine): same model,
    tools, session log and compactions; the app then resumes the session and lives the rest."""
    loop = await open_loop(config_for(workspace, script))
    compact = compactions_after(args.turns, args.app_turns)
    try:
        for n in range(1, args.turns - args.app_turns + 1):
            await (await loop.submit(prompt(n))).result()
            if n in compact:
                await loop.compact()
            if n % 100 == 0:
                print(f"  … {n} turns headless", flush=True)
    finally:
        await loop.close()


async def live_day(app: TuiAgentApp, pilot: Pilot[None], args: argparse.Namespace) -> list[float]:
    """The app's part of the day; CPU seconds per turn over each tenth of it (flat if nothing
    grows with the transcript)."""
    compact = compactions_after(args.turns, args.app_turns)
    first = args.turns - args.app_turns + 1
    tenth = max(1, args.app_turns // 10)
    per_turn: list[float] = []
    cpu = time.process_time()
    for n in range(first, args.turns + 1):
        await submit(pilot, prompt(n))
        await until(answered(app, f"[done {n}]"))
        if n in compact:
            done = compactions(app) + 1
            await submit(pilot, "/compact")
            await until(lambda done=done: compactions(app) >= done and not app.vm.busy)
        if (n - first + 1) % tenth == 0:
            per_turn.append((time.process_time() - cpu) / tenth)
            cpu = time.process_time()
            print(
                f"  … {n} turns, {len(app.vm.blocks):,} blocks, "
                f"{per_turn[-1] * 1000:.0f} ms CPU a turn",
                flush=True,
            )
    return per_turn


@dataclass
class EndFigures:
    idle: list[tuple[float, float]]  # key echo, (wall, CPU) seconds
    streaming: list[tuple[float, float]]
    scrolled: list[tuple[float, float]]
    rss_mb: float = 0.0
    idle_cpu: float = 0.0  # share of a core
    steady_cpu: float = 0.0  # the same once the cursor stopped blinking
    wakeups: int = 0  # voluntary context switches while idle
    timers: int = 0  # the event loop's scheduled callbacks while idle


async def echo(app: TuiAgentApp, presses: int) -> list[tuple[float, float]]:
    times = []
    for n in range(presses):
        await asyncio.sleep(0.05)
        times.append(await press_and_wait(app, "abcdefghij"[n % 10]))
    app.prompt_input.clear_input()
    return times


async def echo_while_streaming(
    app: TuiAgentApp, pilot: Pilot[None], n: int
) -> list[tuple[float, float]]:
    await submit(pilot, f"[stream {n}] Explain the whole change.")
    done = answered(app, f"[done stream {n}]")
    times: list[tuple[float, float]] = []
    k = 0
    while not done():
        await asyncio.sleep(0.1)
        times.append(await press_and_wait(app, "abcdefghij"[k % 10]))
        k += 1
    app.prompt_input.clear_input()
    return times


async def scroll_round_trip(pilot: Pilot[None], pages: int) -> float:
    """PageUp `pages` times, Home (the session's start), then End: seconds for the trip."""
    start = time.perf_counter()
    for _ in range(pages):
        await pilot.press("pageup")
    await pilot.press("home", "end")
    await pilot.pause()
    return time.perf_counter() - start


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def wakeups() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("voluntary_ctxt_switches:"):
            return int(line.split()[1])
    return 0


SETTLE_S = 1.0  # the app's answer to the harness's last key, before idleness is measured


async def idle(seconds: float) -> tuple[float, float, int, int]:
    """CPU share of a core over `seconds` of doing nothing, and over the part of them after the
    prompt's cursor stopped blinking; the voluntary context switches in that time; and the most
    callbacks the event loop had scheduled at once (cancelled ones, which asyncio drops from its
    heap only now and then, left out).

    The window opens `SETTLE_S` after the harness's last action: the frame that clears the draft
    and a full collection held back while keys came (`ui/gc_pacing.py`) answer that action."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(SETTLE_S)
    blink_ends = time.perf_counter() + BLINK_FOR_S - SETTLE_S
    cpu, wall, woke = time.process_time(), time.perf_counter(), wakeups()
    steady: tuple[float, float] | None = None
    timers = 0
    end = wall + seconds
    while (now := time.perf_counter()) < end:
        if steady is None and now >= blink_ends:
            steady = (time.process_time(), now)
        await asyncio.sleep(1.0)
        scheduled = loop._scheduled  # type: ignore[attr-defined]
        timers = max(timers, sum(not handle.cancelled() for handle in scheduled))
    done_cpu, done_wall = time.process_time(), time.perf_counter()
    share = (done_cpu - cpu) / (done_wall - wall)
    steady_share = (
        float("nan") if steady is None else ((done_cpu - steady[0]) / (done_wall - steady[1]))
    )
    return share, steady_share, wakeups() - woke - int(seconds), timers  # less the probe's own


async def measure_end(
    app: TuiAgentApp, pilot: Pilot[None], args: argparse.Namespace, tag: int
) -> EndFigures:
    figures = EndFigures(
        idle=await echo(app, args.presses),
        streaming=await echo_while_streaming(app, pilot, tag),
        scrolled=[],
    )
    await scroll_round_trip(pilot, args.pages)
    figures.scrolled = await echo(app, args.presses)
    figures.rss_mb = rss_mb()
    idled = await idle(args.idle_s)
    figures.idle_cpu, figures.steady_cpu, figures.wakeups, figures.timers = idled
    return figures


async def fresh_app(args: argparse.Namespace, tag: int) -> EndFigures:
    workspace = Path(tempfile.mkdtemp(prefix="long-day-fresh-"))
    make_workspace(workspace)
    model = DayModel(workspace)
    use_model(model)
    loop = await open_loop(config_for(workspace, workspace.parent / "none.json"))
    app = TuiAgentApp(loop)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause(0.5)
            return await measure_end(app, pilot, args, tag)
    finally:
        await app.loop.close()


@dataclass
class Day:
    workspace: Path
    script: Path
    headless: tuple[float, float]  # the turns before the app's, (wall, CPU) seconds
    lived: tuple[float, float]  # the app's turns
    blocks: int
    figures: EndFigures
    per_turn: list[float]  # CPU seconds a turn, over each tenth of the app's part
    model: DayModel


def build_day(args: argparse.Namespace) -> Day:
    """The turns before the app's in a child process, then the app's part in this one."""
    workspace = Path(tempfile.mkdtemp(prefix="long-day-ws-"))
    make_workspace(workspace)
    script = workspace.parent / f"{workspace.name}-script.json"
    script.write_text('{"steps": []}', encoding="utf-8")
    return asyncio.run(app_day(workspace, script, args))


async def app_day(workspace: Path, script: Path, args: argparse.Namespace) -> Day:
    model = DayModel(workspace)
    use_model(model)
    resumed = args.app_turns < args.turns
    headless = (0.0, 0.0)
    if resumed:
        child = headless_in_child(workspace, script, args)
        headless = (child["wall"], child["cpu"])
        model.calls, model.jobs = int(child["calls"]), int(child["jobs"])
        model.summaries = int(child["summaries"])
    loop = await open_loop(config_for(workspace, script, resume=resumed))
    app = TuiAgentApp(loop)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: len(app.transcript.children) > 1)
            wall, cpu = time.perf_counter(), time.process_time()
            per_turn = await live_day(app, pilot, args)
            lived = (time.perf_counter() - wall, time.process_time() - cpu)
            figures = await measure_end(app, pilot, args, 0)
            return Day(
                workspace, script, headless, lived, len(app.vm.blocks), figures, per_turn, model
            )
    finally:
        await app.loop.close()


def p95_ms(values: list[tuple[float, float]], which: int) -> float:
    return percentile([v[which] for v in values], 0.95) * 1000


def row(measure: str, ours: str, base: str = "", ratio: str = "", target: str = "") -> None:
    print(f"{measure:<46} {ours:>16} {base:>12} {ratio:>7}  {target}", flush=True)


def verdict(target: str, met: bool) -> str:
    return f"{target} {'✓' if met else '✗'}"


def echo_rows(day: EndFigures, fresh: list[EndFigures]) -> None:
    for name, label in (
        ("idle", "key echo p95, idle"),
        ("streaming", "  while a 10 KB answer streams"),
        ("scrolled", "  after PageUp…, Home, End"),
    ):
        for which, clock in ((0, "wall"), (1, "CPU")):
            ours = p95_ms(getattr(day, name), which)
            base = statistics.median(p95_ms(getattr(f, name), which) for f in fresh)
            ratio = ours / base
            row(f"{label} ({clock})", f"{ours:.1f} ms", f"{base:.1f} ms", f"{ratio:.2f}×",
                verdict("≤ 1.2×", ratio <= 1.2))  # fmt: skip


def table(
    args: argparse.Namespace, day: Day, fresh: list[EndFigures], resumed: Resumed | None
) -> None:
    f = day.figures
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    first, last = day.per_turn[0], day.per_turn[-1]
    row("measure", "long day", "fresh", "ratio", "target")
    print("-" * 100)
    head, lived, model = day.headless, day.lived, day.model
    row(f"the day: {args.turns - args.app_turns} turns headless, wall / CPU",
        f"{head[0]:.0f} / {head[1]:.0f} s")  # fmt: skip
    row(f"  then {args.app_turns} in the app, wall / CPU", f"{lived[0]:.0f} / {lived[1]:.0f} s")
    row("  tool calls / sub-agent tasks / compactions",
        f"{model.calls:,} / {model.jobs} / {model.summaries}")  # fmt: skip
    row("  transcript blocks at the end", f"{day.blocks:,}")
    row("  CPU a turn, first / last tenth", f"{first * 1e3:.0f} / {last * 1e3:.0f} ms", "",
        f"{last / first:.2f}×")  # fmt: skip
    echo_rows(f, fresh)
    row("RSS at the end (peak)", f"{f.rss_mb:.0f} MB", f"({peak:.0f})", "",
        verdict("≤ 200 MB", f.rss_mb <= 200))  # fmt: skip
    idle_fresh = statistics.median(e.idle_cpu for e in fresh)
    row(f"idle CPU over {args.idle_s:.0f} s", f"{f.idle_cpu * 100:.2f} %",
        f"{idle_fresh * 100:.2f} %", "", verdict("≤ 0.5 %", f.idle_cpu <= 0.005))  # fmt: skip
    if f.steady_cpu == f.steady_cpu:  # not NaN: the window outlasted the cursor's blinking
        steady_fresh = statistics.median(e.steady_cpu for e in fresh)
        row("  once the cursor stopped blinking", f"{f.steady_cpu * 100:.2f} %",
            f"{steady_fresh * 100:.2f} %")  # fmt: skip
    row("  wake-ups (voluntary switches) / max timers", f"{f.wakeups} / {f.timers}")
    if resumed is not None:
        resume_rows(resumed)


def resume_rows(r: Resumed) -> None:
    row("resume in a pty: a screen of output", f"{r.screen_s:.2f} s")
    row("  first frame, the footer drawn", f"{r.frame_s:.2f} s", "", "",
        verdict("≤ 1 s", r.frame_s <= 1))  # fmt: skip
    row("  a typed word echoed", f"{r.usable_s:.2f} s")
    row("  the end of the conversation shown, wall / CPU", f"{r.end_s:.2f} / {r.end_cpu_s:.2f} s")
    row("resume headless: longest stall wall / CPU",
        f"{r.stall[0] * 1e3:.0f} / {r.stall[1] * 1e3:.0f} ms", "", "",
        verdict("≤ 50 ms", r.stall[0] <= 0.05))  # fmt: skip
    row("  until the newest blocks are mounted", f"{r.filled_s:.2f} s")
    row("event log / sub-agent logs", f"{r.log_mb:.1f} / {r.tasks_mb:.1f} MB")
    row("fold (load_history), wall / CPU", f"{r.fold[0]:.2f} / {r.fold[1]:.2f} s",
        f"{r.entries:,}", "", "history entries")  # fmt: skip
    row("tui-agent export (process, wall)", f"{r.export_s:.2f} s", "", "",
        verdict("≤ 3 s", r.export_s <= 3))  # fmt: skip


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--idle-s", type=float, default=20.0)
    parser.add_argument("--presses", type=int, default=60)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--app-turns", type=int, default=100, help="the last turns, in the app")
    parser.add_argument("--quick", action="store_true", help="20 turns, 5 s idle")
    parser.add_argument(
        "--no-resume", action="store_true", help="leave out the resume part (long_day_resume.py)"
    )
    parser.add_argument("--headless-part", nargs=2, metavar=("WORKSPACE", "SCRIPT"),
                        help=argparse.SUPPRESS)  # fmt: skip
    args = parser.parse_args()
    if args.quick:
        args.turns, args.app_turns, args.idle_s, args.presses = 60, 20, 5.0, 30
    if args.headless_part:
        headless_child(args)
        return
    print(f"load average before: {load()}", flush=True)
    fresh = [asyncio.run(fresh_app(args, 1))]
    day = build_day(args)
    fresh.append(asyncio.run(fresh_app(args, 2)))
    resumed = None if args.no_resume else resume(day.workspace, day.script)
    print()
    table(args, day, fresh, resumed)
    print(f"load average after: {load()}", flush=True)


if __name__ == "__main__":
    main()
