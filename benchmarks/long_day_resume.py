"""What resuming the long day's session costs (`benchmarks/long_day.py` builds it).

- in a pseudo-terminal, the installed `tui-agent --continue`: seconds to the first whole screen
  of output (`SCREEN_BYTES`: how soon Python and Textual start, whatever the session), to its
  first frame (the footer, drawn last), to a typed word echoed in the input (usable), and to
  the last line of the session's last answer on the screen (the end of the conversation shown;
  the first frame comes before any of the session is read), with the app's CPU by then;
- headless, the same opening (first frame, then the loop opened beside it) with the stall probe
  of `benchmarks/ui.py` until the newest blocks are mounted;
- the log's size, `load_history` (the fold), and `tui-agent export` as a process.

`benchmarks/long_day.py` calls `resume` after its day (it sets `TUI_AGENT_HOME` before importing
this module). Run alone, it measures a saved day again, each part `--runs` times (medians):
`.venv/bin/python -m benchmarks.long_day_resume --home HOME --workspace WS --script SCRIPT`,
where HOME, WS and SCRIPT are the day's `TUI_AGENT_HOME`, workspace and script file (long_day.py
leaves them under the temporary folder, `long-day-home-*`, `long-day-ws-*`, `*-script.json`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pty
import select
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from math import isnan
from pathlib import Path

from benchmarks.ui import StallProbe, quit_in_pty, transcript_filled
from tui_agent.context import load_history
from tui_agent.session import LoopConfig, Session, open_loop
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.opening import OpeningLoop
from tui_agent.ui.run import _starting

ROOT = Path(__file__).resolve().parents[1]
SIZE = (120, 40)
# Output enough for a whole screen: the first frame's bytes, before the footer's keys.
SCREEN_BYTES = 4096


def config_for(workspace: Path, script: Path, *, resume: bool = False) -> LoopConfig:
    return LoopConfig(
        workspace=workspace,
        provider="scripted",
        script=str(script),
        approval_mode="yolo",
        continue_latest=resume,
        trust_asked=True,
    )


async def until(condition: Callable[[], bool], timeout_s: float = 120.0) -> None:
    """Wait for `condition` without touching the app (Pilot's `pause` forces a whole frame each
    time it is called: in a wait loop that would be most of the day's CPU)."""
    deadline = time.perf_counter() + timeout_s
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the app never reached the expected state")
        await asyncio.sleep(0.005)


def pty_resume(
    workspace: Path, script: Path, last_line: str
) -> tuple[float, float, float, float, float]:
    """`tui-agent --continue` in a pseudo-terminal: seconds to a whole screen of output, to the
    footer (the first frame, drawn last), to a typed word echoed in the input (usable), and to
    `last_line` (the last line of the session's last answer) on the screen: the end of the
    conversation shown; and the CPU seconds the app had used by then (a figure a busy machine
    disturbs less)."""
    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    os.set_blocking(master, False)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
    argv = [str(ROOT / ".venv/bin/tui-agent"), "--continue", "--yolo"]
    argv += ["--provider", "scripted", "--script", str(script)]
    env = {**os.environ, "TERM": "xterm-256color"}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=workspace)
    os.close(slave)
    seen, typed = b"", False
    screen = frame = usable = end = end_cpu = float("nan")
    wanted = last_line.encode()
    while time.perf_counter() < start + 30:
        ready, _, _ = select.select([master], [], [], 0.005)
        if ready:
            try:
                seen += os.read(master, 1 << 16)
            except OSError:
                break
        now = time.perf_counter() - start
        if isnan(screen) and len(seen) >= SCREEN_BYTES:
            screen = now
        if not typed and b"palette" in seen:
            frame, typed = now, True
            os.write(master, b"zqxj")
        if typed and isnan(usable) and b"zqxj" in seen:
            usable = now
        if isnan(end) and wanted in seen:
            end, end_cpu = now, _cpu_of(proc.pid)
        if not (isnan(usable) or isnan(end)):
            break
    quit_in_pty(proc, master, timeout_s=10)
    return screen, frame, usable, end, end_cpu


def _cpu_of(pid: int) -> float:
    """CPU seconds (user and system) a running process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def headless_resume(workspace: Path, script: Path) -> tuple[float, float, float]:
    """Resume as the command line does (the first frame, then the loop opened beside it); the
    longest event-loop stall until the newest blocks are mounted, (wall, CPU), and the wall
    seconds until then."""
    config = config_for(workspace, script, resume=True)
    app = TuiAgentApp(OpeningLoop(_starting(config), lambda: open_loop(config)))
    try:
        async with app.run_test(size=SIZE) as pilot:
            start = time.perf_counter()
            probe = StallProbe()
            await until(lambda: not isinstance(app.loop, OpeningLoop))
            await transcript_filled(app)
            filled = time.perf_counter() - start
            await pilot.pause(0.2)
            wall, cpu = await probe.stop()
            return wall, cpu, filled
    finally:
        await app.loop.close()


def export_time(workspace: Path) -> float:
    out = workspace.parent / f"{workspace.name}-export.md"
    start = time.perf_counter()
    subprocess.run(
        [str(ROOT / ".venv/bin/tui-agent"), "export", "-o", str(out)],
        cwd=workspace,
        check=True,
        env=os.environ,
    )
    return time.perf_counter() - start


@dataclass
class Resumed:
    screen_s: float  # in a pty, to a whole screen of output (SCREEN_BYTES)
    frame_s: float  # in a pty, to the footer
    usable_s: float  # in a pty, to a typed word
    end_s: float  # in a pty, to the last line of the last answer on the screen
    end_cpu_s: float  # the app's CPU by then
    stall: tuple[float, float]  # headless, the longest stall (wall, CPU)
    filled_s: float  # headless, to the newest blocks mounted
    log_mb: float
    tasks_mb: float
    fold: tuple[float, float]  # load_history (wall, CPU)
    entries: int
    export_s: float


def resume(workspace: Path, script: Path) -> Resumed:
    session = Session.latest_for(workspace.resolve())
    assert session is not None
    tasks = sum(p.stat().st_size for p in (session.dir / "tasks").glob("*"))
    wall, cpu = time.perf_counter(), time.process_time()
    history = load_history(session.events_path)
    fold = (time.perf_counter() - wall, time.process_time() - cpu)
    answer = next(e.message.text for e in reversed(history) if e.message.role == "assistant")
    last_line = answer.strip().splitlines()[-1].strip()
    screen, frame, usable, end, end_cpu = pty_resume(workspace, script, last_line)
    stall_wall, stall_cpu, filled = asyncio.run(headless_resume(workspace, script))
    return Resumed(
        screen, frame, usable, end, end_cpu, (stall_wall, stall_cpu), filled,
        session.events_path.stat().st_size / 1e6, tasks / 1e6, fold, len(history),
        export_time(workspace),
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description="Resume a saved long day again.")
    parser.add_argument("--home", type=Path, required=True, help="the day's TUI_AGENT_HOME")
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--script", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    os.environ["TUI_AGENT_HOME"] = str(args.home.resolve())  # read at each call (`AppPaths`)
    runs = [resume(args.workspace, args.script) for _ in range(args.runs)]
    first = runs[0]
    print(f"event log / sub-agent logs: {first.log_mb:.1f} / {first.tasks_mb:.1f} MB, "
          f"{first.entries:,} history entries; load {os.getloadavg()[0]:.2f}")  # fmt: skip
    for label, values in (
        ("resume in a pty: a screen of output (s)", [r.screen_s for r in runs]),
        ("  first frame, the footer drawn (s)", [r.frame_s for r in runs]),
        ("  a typed word echoed (s)", [r.usable_s for r in runs]),
        ("  the end of the conversation shown (s)", [r.end_s for r in runs]),
        ("    the app's CPU until then (s)", [r.end_cpu_s for r in runs]),
        ("resume headless: longest stall, wall (ms)", [r.stall[0] * 1e3 for r in runs]),
        ("  the same, CPU (ms)", [r.stall[1] * 1e3 for r in runs]),
        ("  until the newest blocks are mounted (s)", [r.filled_s for r in runs]),
        ("fold (load_history), CPU (s)", [r.fold[1] for r in runs]),
        ("tui-agent export (process, wall s)", [r.export_s for r in runs]),
    ):
        each = " ".join(f"{v:.2f}" for v in values)
        print(f"{label:<44} median {statistics.median(values):8.2f}   ({each})", flush=True)


if __name__ == "__main__":
    main()
