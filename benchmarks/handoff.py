"""How long a key's echo waits to pass from the app's thread to the thread that writes it.

In a terminal the app's thread paints a key's echo and hands the frame to Textual's writer
thread, which needs the interpreter to write it; and the key itself came from the input
thread, which needed the interpreter to parse it. While an answer streams the app's thread is
busy right after the echo (it draws the answer then, on purpose), and a thread waiting for the
interpreter gets it when Python makes the busy thread let go: after its switch interval. The
real app, headless (`run_test`, as `benchmarks/ui.py` runs it), with those two threads played
by two of ours: a typist that wakes at random moments (50-150 ms apart) and posts a key as the
input thread does, and a writer that takes each frame showing a key from a queue, as Textual's
writer thread does. Printed per phase (idle, then a ~10 KB Markdown answer streaming at 600 and
3,000 chars/s) and per switch interval (Python's default 5 ms, and the terminal driver's
`HANDOFF_S`): the time from the paint to the writer holding the frame, and how late the typist
woke (the input thread's wait), p50/p95 in ms. A machine with other work adds its own waits
for a core: compare the two intervals in the same run.

Run: `.venv/bin/python benchmarks/handoff.py [--rounds N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import queue
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import RenderableType  # noqa: E402
from textual import events  # noqa: E402
from textual._compositor import CompositorUpdate  # noqa: E402
from textual.screen import Screen  # noqa: E402
from ui import markdown_answer, percentile, stream_answer  # noqa: E402

from tests.ui.fake_loop import FakeLoop  # noqa: E402
from tui_agent.loop import events as ev  # noqa: E402
from tui_agent.ui.app import TuiAgentApp  # noqa: E402
from tui_agent.ui.terminal_driver import HANDOFF_S  # noqa: E402

IDLE_S = 5.0
STREAM_S = 12.0  # how long each answer streams (its size follows from the rate)


async def phase(rate: int) -> tuple[list[float], list[float]]:
    """(paint -> writer, typist's late wake-up) seconds, one per key."""
    loop = FakeLoop()
    app = TuiAgentApp(loop)
    text = markdown_answer(int(rate * STREAM_S)) if rate else ""
    pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
    handoffs: list[float] = []
    lates: list[float] = []
    frames: queue.Queue[float | None] = queue.Queue()
    shown = threading.Event()
    stop = threading.Event()
    typed = {"before": -1, "in_flight": False}
    async with app.run_test(size=(120, 40)) as pilot:
        loop.emit(
            ev.TurnStarted(turn_id=1, prompt_ids=("p1",), texts=("go",)),
            ev.StepStarted(turn_id=1, step=1),
        )
        await pilot.pause(0.3)
        screen = app.main_screen
        taken = screen.key_pressed

        def key_pressed() -> None:
            typed["in_flight"] = False
            taken()

        screen.key_pressed = key_pressed  # type: ignore[method-assign]
        screen.input_waiting = lambda: bool(typed["in_flight"])  # type: ignore[method-assign]
        display = app._display

        def paint(screen: Screen[Any], renderable: RenderableType | None) -> None:
            display(screen, renderable)
            before = typed["before"]
            if isinstance(renderable, CompositorUpdate) and before not in (
                -1,
                len(app.prompt_input.text),
            ):
                typed["before"] = -1
                frames.put(time.perf_counter())

        app._display = paint  # type: ignore[method-assign]

        def writer() -> None:
            while (painted := frames.get()) is not None:
                handoffs.append(time.perf_counter() - painted)
                shown.set()

        def typist() -> None:
            rng = random.Random(29)
            n = 0
            while not stop.is_set():
                gap = rng.uniform(0.05, 0.15)
                due = time.perf_counter() + gap
                time.sleep(gap)
                lates.append(time.perf_counter() - due)
                shown.clear()
                key = "abcdefghij"[n % 10]
                n += 1
                typed["before"], typed["in_flight"] = len(app.prompt_input.text), True
                event = events.Key(key, key)
                event.set_sender(app)
                app._driver.send_message(event)  # type: ignore[union-attr]
                shown.wait(3)

        threads = [threading.Thread(target=f, daemon=True) for f in (writer, typist)]
        for thread in threads:
            thread.start()
        if rate:
            await stream_answer(loop, pieces, rate, 0.01)
        else:
            await asyncio.sleep(IDLE_S)
        stop.set()
        shown.set()
        await pilot.pause(0.3)
        frames.put(None)
        for thread in threads:
            thread.join(3)
    return handoffs, lates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    default = sys.getswitchinterval()
    rows: dict[tuple[int, float], tuple[list[float], list[float]]] = {}
    for _ in range(args.rounds):
        for interval in (default, HANDOFF_S):  # alternating, so both see the same machine
            sys.setswitchinterval(interval)
            for rate in (0, 600, 3000):
                handoffs, lates = asyncio.run(phase(rate))
                mine = rows.setdefault((rate, interval), ([], []))
                mine[0].extend(handoffs)
                mine[1].extend(lates)
    sys.setswitchinterval(default)
    print(f"load average: {os.getloadavg()[0]:.2f}\n")
    print("phase         switch ms   keys  paint->writer p50    p95  typist late p50    p95")
    for (rate, interval), (handoffs, lates) in sorted(rows.items()):
        name = f"{rate} chars/s" if rate else "idle"
        print(
            f"{name:14s}{interval * 1e3:9.1f}{len(handoffs):7d}"
            f"{percentile(handoffs, 0.5) * 1e3:19.2f}{percentile(handoffs, 0.95) * 1e3:7.2f}"
            f"{percentile(lates, 0.5) * 1e3:17.2f}{percentile(lates, 0.95) * 1e3:7.2f}"
        )


if __name__ == "__main__":
    main()
