"""UI responsiveness: the real app, headless (`run_test`), fed loop events at a fixed rate.

Prints a table:
- keystroke-to-screen while a ~10 KB Markdown answer (headings, lists, fences, tables) streams
  at 600 and at 3,000 chars/s, next to the same with nothing streaming (idle): from the key
  event entering the app's queue to the first screen refresh that shows it; p50/p95 in wall
  time and in CPU time (what the process spent in between; the machine is shared, so wall time
  includes waiting for a core). Best of `--runs` (the run with the lowest CPU p95);
- chunk-to-screen lag p50/p95: assistant deltas emitted at 500 chunks/s for 20 s, each chunk's
  lag measured from the moment it was due to the end of the first screen refresh that drew it
  (coalesced chunks share a refresh; a busy loop that emits late counts as lag); and the same
  for half as long with a key typed every 100 ms (while keys come the answer is drawn just
  after each key's echo, on purpose);
- CPU per 100 characters of a 50 KB Markdown answer, over its first and its last 10 KB (each
  step runs to idle, so no clock is involved): a frame must not cost more as the answer grows;
- the longest event-loop stall while a 2,000-block session is resumed (swapped in, as /resume
  does) until its newest blocks are on screen: the largest gap between the wake-ups of a task
  that sleeps 1 ms, wall and CPU;
- keystroke-to-echo p95 and RSS with a 2,000-turn transcript loaded (history of a resumed
  session: prompt, thinking, text, a tool call and its result per turn);
- time to first usable frame: `python -m tui_agent` in a real pseudo-terminal (demo provider,
  fresh home) until the prompt and footer are drawn, next to a bare Textual app (input + footer).

Run: `.venv/bin/python benchmarks/ui.py [--seconds 20] [--runs 3] [--only NAME ...]`, NAME one
of typing, lag, frames, stall, keys, startup (targets: typing p95 < 30 ms and p50 within 2x of
idle, lag p95 < 50 ms, resume stall < 50 ms, keystroke p95 < 30 ms, RSS < 400 MB, first frame
< 0.3 s). Textual uses textual-speedups when it is installed (not a dependency: it measured
no different), unless `TEXTUAL_SPEEDUPS=0`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pty
import resource
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import RenderableType  # noqa: E402
from textual import events  # noqa: E402
from textual._compositor import CompositorUpdate  # noqa: E402
from textual.screen import Screen  # noqa: E402

from tests.ui.fake_loop import FakeLoop  # noqa: E402
from tui_agent.loop import events as ev  # noqa: E402
from tui_agent.ui.app import TuiAgentApp  # noqa: E402
from tui_agent.ui.widgets.blocks import AssistantText  # noqa: E402
from tui_agent.ui.widgets.transcript import PRUNE_BATCH  # noqa: E402
from tui_agent.vocab import (  # noqa: E402
    EntryMeta,
    HistoryEntry,
    Message,
    TextPart,
    ThinkPart,
    ToolCall,
)

RATE = 500  # chunks per second
WORDS = ["stream", "tokens", "render", "markdown", "quickly", "while", "the", "user", "reads"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def chunk(n: int) -> str:
    """About 7 characters; a paragraph break every 60 chunks, a list item every 200."""
    word = WORDS[n % len(WORDS)] + " "
    if n % 200 == 199:
        return word + "\n\n- a list item with `code`\n\n"
    if n % 60 == 59:
        return word + "\n\n"
    return word


async def stream_lag(seconds: float, typing: bool = False) -> tuple[list[float], int]:
    loop = FakeLoop()
    app = TuiAgentApp(loop)
    due: list[float] = []  # when chunk i was due
    ends: list[int] = []  # cumulative text length after chunk i
    lags: list[float] = []
    shown = 0  # chunks already accounted for

    async def watch() -> None:
        """After each screen refresh, time the chunks the answer's lines now hold (drawn in
        that refresh): coalesced chunks share a refresh."""
        nonlocal shown
        while True:
            painted = asyncio.Event()
            app.call_after_refresh(painted.set)
            await painted.wait()
            now = time.perf_counter()
            answers = app.transcript.query(AssistantText)
            drawn = answers.first().drawn_chars if answers else 0
            while shown < len(ends) and ends[shown] <= drawn:
                lags.append(now - due[shown])
                shown += 1
            await asyncio.sleep(0)

    async def type_keys() -> None:
        while True:
            await asyncio.sleep(0.1)
            send_key(app, "x")

    async with app.run_test(size=(120, 40)) as pilot:
        loop.emit(
            ev.TurnStarted(turn_id=1, prompt_ids=("p1",), texts=("go",)),
            ev.StepStarted(turn_id=1, step=1),
        )
        await pilot.pause()
        watcher = asyncio.create_task(watch())
        typist = asyncio.create_task(type_keys()) if typing else None
        start = time.perf_counter()
        count = int(seconds * RATE)
        length = 0
        n = 0
        while n < count:
            now = time.perf_counter()
            while n < count and start + n / RATE <= now:
                text = chunk(n)
                length += len(text)
                due.append(start + n / RATE)
                ends.append(length)
                loop.emit(ev.AssistantDelta(turn_id=1, step=1, text=text))
                n += 1
            await asyncio.sleep(1 / RATE)
        while shown < count:
            await pilot.pause(0.05)
        watcher.cancel()
        if typist is not None:
            typist.cancel()
    return lags, count


def markdown_answer(size: int = 10_000) -> str:
    """A Markdown answer of about `size` characters, shaped like a real one."""
    parts: list[str] = []
    n = 0
    while sum(map(len, parts)) < size:
        n += 1
        parts += [
            f"## Section {n}\n\nThis paragraph explains **part {n}** of the change, with "
            f"`inline code` and a [link](https://example.com/{n}); it wraps across lines.\n\n",
            "- first point about the module\n- second point, with `code`\n"
            "  - a nested item\n- third point\n\n",
            f"```python\ndef handler_{n}(event):\n    if event.kind == 'x':\n"
            f"        return compute(event.value * {n})\n    return None\n```\n\n",
            f"| name | value | note |\n|---|---|---|\n| alpha | {n} | first |\n"
            f"| beta | {n * 2} | second |\n\n",
        ]
    return "".join(parts)


def send_key(app: TuiAgentApp, key: str) -> None:
    """A key as the terminal driver sends it (`pilot.press` would also paint the screen)."""
    event = events.Key(key, key)
    event.set_sender(app)
    app._driver.send_message(event)  # type: ignore[union-attr]


async def press_and_wait(app: TuiAgentApp, key: str) -> tuple[float, float]:
    """Send a key as the terminal driver would; (wall, CPU) seconds until it is on screen: the
    first update the app hands its driver (`App._display`) once the prompt holds the key. (An
    after-refresh callback would wait for the whole frame: the key's widget is painted alone,
    before the frame of what else is pending.)"""
    before = len(app.prompt_input.text)
    painted = asyncio.Event()
    display = app._display

    def shown(screen: Screen[Any], renderable: RenderableType | None) -> None:
        display(screen, renderable)
        if isinstance(renderable, CompositorUpdate) and len(app.prompt_input.text) != before:
            painted.set()

    app._display = shown  # type: ignore[method-assign]
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        send_key(app, key)
        await painted.wait()
    finally:
        app._display = display  # type: ignore[method-assign]
    return time.perf_counter() - wall, time.process_time() - cpu


async def stream_answer(loop: FakeLoop, pieces: list[str], rate: float, tick_s: float) -> None:
    """The answer's pieces as deltas of turn 1's first step, `rate` characters a second,
    looking at the clock every `tick_s`."""
    start, sent, total = time.perf_counter(), 0, 0
    while sent < len(pieces):
        due = (time.perf_counter() - start) * rate
        while sent < len(pieces) and total < due:
            loop.emit(ev.AssistantDelta(turn_id=1, step=1, text=pieces[sent]))
            total += len(pieces[sent])
            sent += 1
        await asyncio.sleep(tick_s)


async def typing_while_streaming(rate: float, idle_s: float = 8.0) -> list[tuple[float, float]]:
    """Keystrokes every 100 ms while the answer streams at `rate` chars/s (0: nothing streams)."""
    loop = FakeLoop()
    app = TuiAgentApp(loop)
    text = markdown_answer()
    pieces = [text[i : i + 4] for i in range(0, len(text), 4)]  # about one token each
    latencies: list[tuple[float, float]] = []
    async with app.run_test(size=(120, 40)) as pilot:
        loop.emit(
            ev.TurnStarted(turn_id=1, prompt_ids=("p1",), texts=("go",)),
            ev.StepStarted(turn_id=1, step=1),
        )
        await pilot.pause()
        done = asyncio.Event()

        async def feed() -> None:
            if rate == 0:
                await asyncio.sleep(idle_s)
            else:
                await stream_answer(loop, pieces, rate, 0.005)
            done.set()

        feeder = asyncio.create_task(feed())
        n = 0
        while not done.is_set():
            await asyncio.sleep(0.1)
            latencies.append(await press_and_wait(app, "abcdefghij"[n % 10]))
            n += 1
        await feeder
    return latencies


async def frame_costs(size: int, step: int = 100) -> list[float]:
    """CPU seconds per `step` characters of a `size`-character Markdown answer: the append and
    the frame that shows it, each step run to idle before the next (no clock involved)."""
    loop = FakeLoop()
    app = TuiAgentApp(loop)
    text = markdown_answer(size)
    costs: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        loop.emit(
            ev.TurnStarted(turn_id=1, prompt_ids=("p1",), texts=("go",)),
            ev.StepStarted(turn_id=1, step=1),
        )
        await pilot.pause()
        for start in range(0, len(text), step):
            cpu = time.process_time()
            loop.emit(ev.AssistantDelta(turn_id=1, step=1, text=text[start : start + step]))
            await pilot.pause()
            costs.append(time.process_time() - cpu)
    return costs


async def resume_stall(turns: int) -> tuple[float, float]:
    """Swap a long session in (as /resume does); the longest gap between wake-ups of a task
    sleeping 1 ms, until the newest blocks are mounted: (wall, CPU) seconds."""
    app = TuiAgentApp(FakeLoop())
    session = FakeLoop(entries=long_history(turns))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.5)
        probe = StallProbe()
        app._detach_loop()
        app._attach_loop(session)  # type: ignore[arg-type]
        await transcript_filled(app)
        await pilot.pause(0.2)
        return await probe.stop()


class StallProbe:
    """A task that sleeps 1 ms at a time from its creation; `stop` gives the longest gap between
    its wake-ups, (wall, CPU) seconds: how long the event loop was kept from other work."""

    def __init__(self) -> None:
        self.gaps: list[tuple[float, float]] = [(0.0, 0.0)]
        self._stopped = asyncio.Event()
        self._task = asyncio.create_task(self._tick())

    async def _tick(self) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        while not self._stopped.is_set():
            await asyncio.sleep(0.001)
            now_wall, now_cpu = time.perf_counter(), time.process_time()
            self.gaps.append((now_wall - wall, now_cpu - cpu))
            wall, cpu = now_wall, now_cpu

    async def stop(self) -> tuple[float, float]:
        self._stopped.set()
        await self._task
        return max(g[0] for g in self.gaps), max(g[1] for g in self.gaps)


async def transcript_filled(app: TuiAgentApp) -> None:
    """Until the transcript has mounted its window of newest blocks (a resume's last stage)."""
    window = min(PRUNE_BATCH, len(app.vm.blocks))
    while len(app.transcript.children) < window + 1:  # noqa: ASYNC110 - poll the screen
        await asyncio.sleep(0.01)


def long_history(turns: int) -> list[HistoryEntry]:
    entries: list[HistoryEntry] = []
    for t in range(turns):
        call = ToolCall(id=f"c{t}", name="read_file", arguments=f'{{"path": "src/m{t}.py"}}')
        entries += [
            HistoryEntry(
                message=Message(role="user", content=(TextPart(text=f"question {t}: why?"),)),
                meta=EntryMeta(source="input"),
            ),
            HistoryEntry(
                message=Message(
                    role="assistant",
                    content=(
                        ThinkPart(think="Let me check the module first."),
                        TextPart(text=f"Reading **m{t}.py**.\n\n- point one\n- point two"),
                    ),
                    tool_calls=(call,),
                ),
                meta=EntryMeta(source="llm"),
            ),
            HistoryEntry(
                message=Message(
                    role="tool", content=(TextPart(text="x = 1\n" * 40),), tool_call_id=f"c{t}"
                ),
                meta=EntryMeta(source="tool"),
            ),
            HistoryEntry(
                message=Message(role="assistant", content=(TextPart(text=f"Answer {t}: done."),)),
                meta=EntryMeta(source="llm"),
            ),
        ]
    return entries


async def keystrokes(turns: int, presses: int) -> tuple[list[float], float]:
    loop = FakeLoop(entries=long_history(turns))
    app = TuiAgentApp(loop)
    latencies: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(3)
        for n in range(presses):
            key = "abcdefghij"[n % 10]
            painted = asyncio.Event()
            before = len(app.prompt_input.text)
            event = events.Key(key, key)
            event.set_sender(app)
            start = time.perf_counter()
            # What a terminal key does: the driver hands the event to the app's queue.
            app._driver.send_message(event)  # type: ignore[union-attr]
            while len(app.prompt_input.text) == before:  # noqa: ASYNC110 - poll each loop turn
                await asyncio.sleep(0)
            app.call_after_refresh(painted.set)
            await painted.wait()
            latencies.append(time.perf_counter() - start)
            if n % 50 == 49:
                app.prompt_input.clear_input()
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return latencies, rss_mb


BARE_APP = """
from textual.app import App
from textual.widgets import Footer, TextArea
class Bare(App):
    BINDINGS = [("ctrl+q", "quit", "Quit")]
    def compose(self):
        yield TextArea()
        yield Footer()
Bare().run()
"""


def first_frame(argv: list[str], marker: bytes, env: dict[str, str]) -> float:
    """Seconds from spawn until `marker` (drawn last: the footer) appears on the terminal."""
    master, slave = pty.openpty()
    os.set_blocking(master, False)
    import fcntl
    import struct
    import termios

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=env["WS"])
    os.close(slave)
    seen = b""
    elapsed = float("nan")
    deadline = start + 20
    while time.perf_counter() < deadline:
        ready, _, _ = select.select([master], [], [], 0.01)
        if ready:
            try:
                seen += os.read(master, 65536)
            except OSError:
                break
            if marker in seen:
                elapsed = time.perf_counter() - start
                break
    quit_in_pty(proc, master)
    return elapsed


def quit_in_pty(proc: subprocess.Popen[bytes], master: int, timeout_s: float = 5.0) -> None:
    """Ctrl+Q to the app in the pseudo-terminal; killed if it has not ended by `timeout_s`."""
    os.write(master, b"\x11")
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    os.close(master)


def startup(runs: int) -> tuple[float, float]:
    python = str(ROOT / ".venv" / "bin" / "python")
    app_times: list[float] = []
    bare_times: list[float] = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as ws:
            skip = ("TEXTUAL_", "OPENAI", "ANTHROPIC")
            env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
            env.update(TUI_AGENT_HOME=home, WS=ws, TERM="xterm-256color")
            app_times.append(first_frame([python, "-m", "tui_agent"], b"palette", env))
            bare_times.append(first_frame([python, "-c", BARE_APP], b"Quit", env))
    return statistics.median(app_times), statistics.median(bare_times)


def best(runs: list[list[tuple[float, float]]]) -> list[tuple[float, float]]:
    return min(runs, key=lambda run: percentile([cpu for _, cpu in run], 0.95))


Row = tuple[str, str, str]


def ms(values: list[float], q: float) -> str:
    return f"{percentile(values, q) * 1000:.1f} ms"


def both(run: list[tuple[float, float]], q: float) -> str:
    """Wall and CPU percentiles of (wall, CPU) pairs."""
    return f"{ms([w for w, _ in run], q)} / {ms([c for _, c in run], q)}"


def typing_rows(args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    for rate in (0, 600, 3000):
        run = best([asyncio.run(typing_while_streaming(rate)) for _ in range(args.runs)])
        if rate == 0:
            rows += [
                ("typing, idle: p50 (wall / CPU)", both(run, 0.5), "reference"),
                ("typing, idle: p95", both(run, 0.95), ""),
            ]
        else:
            rows += [
                (f"typing while streaming {rate} chars/s: p50", both(run, 0.5), "< 2x idle"),
                (f"typing while streaming {rate} chars/s: p95", both(run, 0.95), "< 30 ms"),
            ]
    return rows


def lag_rows(args: argparse.Namespace) -> list[Row]:
    lags, count = asyncio.run(stream_lag(args.seconds))
    typed, _ = asyncio.run(stream_lag(args.seconds / 2, typing=True))
    return [
        (f"chunk-to-screen lag p50 ({count} chunks @ {RATE}/s)", ms(lags, 0.5), ""),
        ("chunk-to-screen lag p95", ms(lags, 0.95), "< 50 ms"),
        ("  p95 over the first 5 s only (a ~15 KB answer)", ms(lags[: 5 * RATE], 0.95), ""),
        ("the same, typing a key each 100 ms: p50", ms(typed, 0.5), ""),
        ("the same, typing a key each 100 ms: p95", ms(typed, 0.95), ""),
    ]


def frame_rows(args: argparse.Namespace) -> list[Row]:
    size, window = 50_000, 100  # 100 steps of 100 characters: the first and last 10 KB
    runs = [asyncio.run(frame_costs(size)) for _ in range(args.runs)]
    first = min((run[:window] for run in runs), key=lambda run: percentile(run, 0.5))
    last = min((run[-window:] for run in runs), key=lambda run: percentile(run, 0.5))
    return [
        (
            "CPU per 100 chars streamed, first 10 KB: p50 / p95",
            f"{ms(first, 0.5)} / {ms(first, 0.95)}",
            "",
        ),
        (
            "  the same, last 10 KB of a 50 KB answer",
            f"{ms(last, 0.5)} / {ms(last, 0.95)}",
            "≈ first",
        ),
    ]


def stall_rows(args: argparse.Namespace) -> list[Row]:
    stalls = [asyncio.run(resume_stall(400)) for _ in range(args.runs)]  # 2,000 blocks
    wall, cpu = min(stalls, key=lambda s: s[1])
    return [
        (
            "longest stall resuming 2,000 blocks (wall / CPU)",
            f"{wall * 1000:.0f} ms / {cpu * 1000:.0f} ms",
            "< 50 ms",
        )
    ]


def keystroke_rows(args: argparse.Namespace) -> list[Row]:
    keys, rss = asyncio.run(keystrokes(args.turns, args.presses))
    return [
        (f"keystroke-to-echo p95 ({args.turns} turns loaded)", ms(keys, 0.95), "< 30 ms"),
        ("keystroke-to-echo p50", ms(keys, 0.5), ""),
        ("peak RSS after the runs above", f"{rss:.0f} MB", "< 400 MB"),
    ]


def startup_rows(args: argparse.Namespace) -> list[Row]:
    app_start, bare_start = startup(args.startup_runs)
    return [
        ("first frame, tui-agent (pty, median)", f"{app_start:.2f} s", "< 0.3 s"),
        ("first frame, bare Textual input+footer", f"{bare_start:.2f} s", "reference"),
    ]


MEASURES = {
    "typing": typing_rows,
    "lag": lag_rows,
    "frames": frame_rows,
    "stall": stall_rows,
    "keys": keystroke_rows,
    "startup": startup_rows,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--presses", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--startup-runs", type=int, default=5)
    parser.add_argument("--only", choices=sorted(MEASURES), action="append")
    args = parser.parse_args()
    os.environ.setdefault("TUI_AGENT_HOME", tempfile.mkdtemp())

    # Rows are printed as each measure ends, so a long run shows its progress.
    print(f"{'measure':<52}  {'value':>22}  target", flush=True)
    print("-" * 88, flush=True)
    for name in args.only or MEASURES:
        for measure, value, target in MEASURES[name](args):
            print(f"{measure:<52}  {value:>22}  {target}", flush=True)


if __name__ == "__main__":
    main()
