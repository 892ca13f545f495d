"""The cost of the command sandbox: wall time per `shell` call, with and without it.

Runs `true` and `ls` RUNS times each through the `shell` tool itself (process group, pipes,
reaper), unsandboxed, in bubblewrap and under Landlock (each where it starts here), and prints
a table: the median and mean wall milliseconds per command, the median's extra over the
unsandboxed run, and the CPU milliseconds per command of this process and its children (user
and system: the kernel's namespace and mount work is system time). Wall time is what a person
waits; on a busy machine it grows with the load, which CPU time does not. Target: under 15 ms
extra per command.

Run: `.venv/bin/python benchmarks/sandbox.py [RUNS]` (default 100).
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tui_agent.tools import (
    UNSANDBOXED,
    Sandbox,
    SandboxPolicy,
    Shell,
    ShellArgs,
    ToolContext,
    Workspace,
    open_sandbox,
)
from tui_agent.vocab import AbortSignal

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 100
COMMANDS = ("true", "ls")
TARGET_MS = 15.0


def cpu_s() -> float:
    own, children = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def per_command_ms(
    sandbox: Sandbox, workspace: Path, command: str
) -> tuple[list[float], float]:
    """Wall milliseconds of each run, and CPU milliseconds per run."""
    root = Workspace(workspace)
    shell = Shell(root, sandbox)
    ctx = ToolContext(AbortSignal(), lambda update: None, lambda text: None, root, "bench")
    args = ShellArgs(command=command)
    await shell.execute(args, ctx)  # warm: caches, the reaper's start
    times = []
    cpu = cpu_s()
    for _ in range(RUNS):
        start = time.perf_counter()
        result = await shell.execute(args, ctx)
        times.append((time.perf_counter() - start) * 1000)
        assert not result.is_error, result.text
    return times, (cpu_s() - cpu) * 1000 / RUNS


async def main() -> None:
    sandboxes = [("none", UNSANDBOXED)]
    for backend in ("bwrap", "landlock"):
        sandbox = open_sandbox(SandboxPolicy(), backends=(backend,))  # type: ignore[arg-type]
        if sandbox.backend == backend:
            sandboxes.append((backend, sandbox))
        else:
            print(f"{backend}: cannot start here ({sandbox.problem})")
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"Sandbox cost per shell call, {RUNS} runs each, load average {load}\n")
    print(
        f"{'command':<8} {'sandbox':<9} {'median ms':>10} {'mean ms':>8} {'extra ms':>9} "
        f"{'CPU ms':>7}"
    )
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        for name in ("a.txt", "b.txt", "c.txt"):
            (workspace / name).write_text(name)
        for command in COMMANDS:
            baseline = 0.0
            for name, sandbox in sandboxes:
                times, cpu = await per_command_ms(sandbox, workspace, command)
                median = statistics.median(times)
                if name == "none":
                    baseline = median
                extra = "" if name == "none" else f"{median - baseline:+.1f}"
                flag = " over target" if name != "none" and median - baseline > TARGET_MS else ""
                print(
                    f"{command:<8} {name:<9} {median:>10.1f} {statistics.mean(times):>8.1f} "
                    f"{extra:>9} {cpu:>7.1f}{flag}"
                )


if __name__ == "__main__":
    asyncio.run(main())
