"""The one-shot's cost in instructions, which a busy machine does not blur: `-p "say hi"` and its
floors, each run once under valgrind's cachegrind (no cache simulation: it counts the
instructions the process and its threads executed, the interpreter's start included).

On a machine shared with other work, wall and CPU times of a 0.6 s process wander by tens of
milliseconds from run to run; the instruction count of the same run repeats to a fraction of a
percent (`PYTHONHASHSEED=0` pins string hashing, which would change set order and so the
work done; session ids and temporary paths still differ: ~0.4 % between invocations), so a change
of a few milliseconds shows as a difference between two rows of one table. It is a proxy for
CPU time (a cache miss costs more than an instruction): read wall time from `startup.py`.
Child processes are not counted (cachegrind follows none): a one-shot's sandbox probe (`bwrap
... true`, ~2.5 ms of CPU) is outside the figures, and so is any time spent waiting.

Rows: `python -c pass`; the httpx one-shot of `startup.py` (the floor of any Python one-shot
that speaks HTTP through httpx); the same after `import pydantic.main` (the vocabulary and the
log's records are pydantic models, so any one-shot of ours pays that import); the same after
every library a turn of ours needs (`startup_programs.LIBRARIES_ONE_SHOT`: what a one-shot
executes beyond it is our own code); the imports that
`tui_agent.entry` and the command line make before a one-shot's loop opens (collection off,
pydantic's plugin loader replaced, `tui_agent.cli` and `tui_agent.session._open`, which
brings the loop, kernel, tools and context layers), without running anything; tui-agent's
one-shot through its console script; and with `--base TREE`, the same script importing TREE
(the code before a change). All talk to `startup.py`'s local server. Then the one-shot again
with `startup.py`'s 2,000-chunk answer: the difference per chunk is the instructions one
streamed chunk costs, the robust counterpart of `startup.py`'s CPU per chunk (a difference of
two medians of CPU times, which a busy machine blurs by tens of percent).

Run: `.venv/bin/python benchmarks/oneshot_instructions.py [--base TREE]` (needs valgrind; two
to four minutes: cachegrind runs a process about thirty times slower).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import startup
import startup_programs

ENTRY_IMPORTS = """
import gc
gc.disable()
from tui_agent._pydantic_hooks import skip_plugin_scan
skip_plugin_scan()
import tui_agent.cli, tui_agent.session._open
"""
CLEARED_ENV = ("OPENAI_API_KEY", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")  # as startup.py does
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def instructions(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int, bytes]:
    """Instructions executed by `argv` (with its threads), and what it printed."""
    valgrind = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--cachegrind-out-file=/dev/null",
    ]
    done = subprocess.run(
        [*valgrind, *argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        check=True,
    )
    found = _REFS.search(done.stderr.decode(errors="replace"))
    if found is None:
        raise RuntimeError(f"no instruction count from valgrind: {done.stderr[-300:]!r}")
    return int(found.group(1).replace(",", "")), done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description="The one-shot's instruction count.")
    parser.add_argument("--base", type=Path, help="a tree of the code before, run beside it")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    python = sys.executable
    one_shot = [str(startup.SCRIPT), *startup.OURS_ARGS, "-p", "say hi"]
    rows: list[tuple[str, list[str], dict[str, str]]] = [
        ("python -c pass", [python, "-c", "pass"], {}),
        ("python: httpx one-shot", [python, "-c", startup_programs.HTTPX_ONE_SHOT], {}),
        (
            "  + import pydantic.main",
            [python, "-c", "import pydantic.main\n" + startup_programs.HTTPX_ONE_SHOT],
            {},
        ),
        (
            "  + a turn's libraries",
            [python, "-c", startup_programs.LIBRARIES_ONE_SHOT],
            {},
        ),
        ("tui-agent: imports only", [python, "-c", ENTRY_IMPORTS], {}),
        ("tui-agent", one_shot, {}),
    ]
    if args.base:
        rows.append(("tui-agent before", one_shot, {"PYTHONPATH": str(args.base.resolve())}))
    trees = [startup.ROOT / "tui_agent"] + ([args.base / "tui_agent"] if args.base else [])
    subprocess.run([python, "-m", "compileall", "-q", *map(str, trees)], check=True)
    counts: dict[str, int] = {}
    streamed: dict[str, int] = {}  # the one-shot rows again, with the long answer
    with tempfile.TemporaryDirectory(prefix="tui-agent-instructions-") as name:
        workspace = Path(name) / "ws"
        workspace.mkdir()
        env = {
            **{k: v for k, v in os.environ.items() if k not in CLEARED_ENV},
            "ANTHROPIC_API_KEY": startup.KEY,
            "TUI_AGENT_HOME": str(Path(name) / "tui-agent"),
            "PYTHONHASHSEED": "0",
        }
        with startup.messages_server(0) as url:
            for label, argv, extra in rows:
                count, out = instructions(
                    argv, {**env, "ANTHROPIC_BASE_URL": url, **extra}, workspace
                )
                if label.startswith("tui-agent") and argv is one_shot:
                    assert out.strip() == b"hi", out
                counts[label] = count
        with startup.messages_server(startup.CHUNKS) as url:
            for label, argv, extra in rows:
                if argv is one_shot:
                    count, out = instructions(
                        argv, {**env, "ANTHROPIC_BASE_URL": url, **extra}, workspace
                    )
                    assert out.strip() == b"x" * startup.CHUNKS, out[-100:]
                    streamed[label] = count
    ours = counts["tui-agent"]
    print('one-shot `-p "say hi"`, instructions executed (valgrind cachegrind, one run each)')
    print(f"{'command':<26} {'M instr':>9}   ratio of tui-agent to it")
    for label, count in counts.items():
        note = "" if label == "tui-agent" else f"{ours / count:.2f}"
        print(f"{label:<26} {count / 1e6:>9.1f}   {note}")
    floor, imports = counts["  + a turn's libraries"], counts["tui-agent: imports only"]
    start = counts["python -c pass"]
    print(
        f"\ntui-agent's run: its imports {(imports - start) / 1e6:.1f} M, then the loop's opening, "
        f"the turn and the exit {(ours - imports) / 1e6:.1f} M; beyond the httpx one-shot with "
        f"the libraries a turn needs: {(ours - floor) / 1e6:.1f} M ({(ours - floor) / ours:.0%} "
        "of the run), our own code"
    )
    print(f"\nper streamed chunk ({startup.CHUNKS:,}-chunk answer minus the short one)")
    per_chunk = {
        label: (count - counts[label]) / startup.CHUNKS for label, count in streamed.items()
    }
    for label, instr in per_chunk.items():
        note = "" if label == "tui-agent" else f"   ratio {per_chunk['tui-agent'] / instr:.2f}"
        print(f"{label:<26} {instr / 1e3:>9.1f} k{note}")


if __name__ == "__main__":
    main()
