"""CPU to the full-screen app's first usable paint, headless, against the bare Textual app (and
a tree of the code before, with `--base TREE`): the precise figure the tmux run of `startup.py`
cannot give on a busy machine.

`startup.py` times the first frame in a real terminal, but it reads the app's CPU only after it
has seen the footer (two tmux subprocesses later), and our app is busy right after its first
frame (the loop stack loads in a worker thread), so on a loaded machine that CPU column grows
with the harness's delay. Here each run is a new interpreter running the program of
`startup_programs.APP_TO_FIRST_FRAME` (command line parser and configuration, the app on a loop
that never opens, drawn headless at 120x40) with `App._display` wrapped: the process's CPU
(`time.process_time`, from interpreter start) is read when Textual hands its driver the first
renderable that shows the footer's keys (the frame `startup.py` waits for: a frame before it,
with an empty footer, is not usable yet), and the process ends there; garbage collection is off
in ours, as the command line keeps it until that frame. The bare app (an `Input` and a `Footer`,
collection on as Textual leaves it) is timed the same way. Runs alternate (ours, before, bare,
ours, ...); medians and the paired ratio are printed, with what ours adds over the bare app.

Run: `.venv/bin/python benchmarks/first_paint.py [RUNS] [--base TREE]` (default 10 runs, about
a minute).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from startup_programs import APP_TO_FIRST_FRAME, BARE_APP, FIRST_FRAME

ROOT = Path(__file__).resolve().parent.parent
RUNS = 10
# Each app stays up until the probe ends the process at its usable paint (the first frame may
# have no footer keys yet).
APP_HEADLESS = APP_TO_FIRST_FRAME.replace(
    f'os.write(2, b"{FIRST_FRAME}\\n")', "await asyncio.Event().wait()"
)
# The bare app drawn as ours is here: headless, through `run_test`, at 120x40.
BARE_HEADLESS = BARE_APP.replace(
    "Bare().run()",
    "import asyncio\n\nasync def main():\n    async with Bare().run_test(size=(120, 40)):\n"
    "        await asyncio.Event().wait()\n\nasyncio.run(main())",
)

# Read the CPU at the first renderable sent to the driver with the footer's keys drawn, then end
# the process at once.
PAINT_PROBE = """
import os, sys, time
import textual.app
_display = textual.app.App._display
def _first_paint(self, screen, renderable):
    if renderable is not None and screen.query("FooterKey"):
        os.write(1, f"{time.process_time():.4f}\\n".encode())
        os._exit(0)
    return _display(self, screen, renderable)
textual.app.App._display = _first_paint
"""


def cpu_at_first_paint(program: str, env: dict[str, str], cwd: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", PAINT_PROBE + program],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description="CPU to the first paint, headless.")
    parser.add_argument("runs", nargs="?", type=int, default=RUNS, help=f"default {RUNS}")
    parser.add_argument("--base", type=Path, help="a tree of the code before, run beside it")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    sides = {"tui-agent": (APP_HEADLESS, {**env, "PYTHONPATH": str(ROOT)})}
    if args.base is not None:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(args.base)], check=True)
        sides["tui-agent before"] = (APP_HEADLESS, {**env, "PYTHONPATH": str(args.base)})
    sides["Textual: bare app"] = (BARE_HEADLESS, env)
    times: dict[str, list[float]] = {name: [] for name in sides}
    with tempfile.TemporaryDirectory() as home:
        for _, side_env in sides.values():
            side_env["TUI_AGENT_HOME"] = home  # no person's config.toml
        for _ in range(args.runs):
            for name, (program, side_env) in sides.items():
                times[name].append(cpu_at_first_paint(program, side_env, home))
    print(f"load average at the end: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    print(f"\nCPU at the first usable paint, headless 120x40 (median of {args.runs} alternating")
    print("runs; usable: the footer's keys drawn)")
    ours = times["tui-agent"]
    bare = times["Textual: bare app"]
    for name, values in times.items():
        line = f"{name:<20} {statistics.median(values):7.3f} s"
        if name != "tui-agent":
            paired = statistics.median(a / b for a, b in zip(ours, values, strict=True))
            line += f"   tui-agent / it (paired): {paired:.2f}"
        if name != "Textual: bare app":
            added = statistics.median(a - b for a, b in zip(values, bare, strict=True))
            line += f"   over the bare app: {added:.3f} s"
        print(line)


if __name__ == "__main__":
    main()
