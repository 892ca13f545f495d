"""Where a start-up's import time goes: `python -X importtime` of a path, summarised.

`profile(argv, env, cwd)` runs a command under `-X importtime` and parses what it printed;
`summary` prints the total (sum of every module's own time), that total split into our own
modules, third-party packages and the standard library, the costliest top-level imports by
cumulative time and the costliest packages by their own time. Used by `startup.py` for the
one-shot (the console script, run to its answer) and the full-screen app (headless, up to its
first frame: the real terminal driver writes its frames to stderr, where `-X importtime`
writes too, so the app is drawn by Textual's headless driver instead; the command line's parser
and configuration, the app's modules and its first layout are the same).
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from dataclasses import dataclass

from startup_programs import FIRST_FRAME


@dataclass(frozen=True)
class Imported:
    name: str
    self_us: int
    cumulative_us: int
    depth: int  # 0: imported by the program itself, not by another module


def profile(argv: list[str], env: dict[str, str], cwd: str) -> list[Imported]:
    """`argv` (a Python program's arguments after the interpreter) under `-X importtime`; only
    the imports before the first-frame marker when the program prints one."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:3]} exited {done.returncode}: {done.stderr[-500:]}")
    found = []
    for line in done.stderr.split(FIRST_FRAME, 1)[0].splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cumulative, name = line.removeprefix("import time:").split("|")
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        found.append(Imported(name.strip(), int(own), int(cumulative), depth))
    return found


def origin(name: str) -> str:
    top = name.split(".", 1)[0]
    if top == "tui_agent":
        return "ours"
    return "stdlib" if top in sys.stdlib_module_names else "third-party"


def _package(name: str) -> str:
    """`tui_agent.loop.events` -> `tui_agent.loop`; `pydantic._internal.x` -> `pydantic`."""
    parts = name.split(".")
    return ".".join(parts[:2]) if parts[0] == "tui_agent" else parts[0]


def summary(title: str, imported: list[Imported], top: int = 12) -> None:
    total = sum(i.self_us for i in imported)
    by_origin: Counter[str] = Counter()
    by_package: Counter[str] = Counter()
    for entry in imported:
        by_origin[origin(entry.name)] += entry.self_us
        by_package[_package(entry.name)] += entry.self_us
    split = ", ".join(
        f"{kind} {by_origin[kind] / 1000:.0f} ms ({by_origin[kind] / max(total, 1):.0%})"
        for kind in ("ours", "third-party", "stdlib")
    )
    print(f"\n{title}: {len(imported)} modules, {total / 1000:.0f} ms of imports ({split})")
    print("  top-level imports by cumulative time:")
    roots = sorted((i for i in imported if i.depth == 0), key=lambda i: -i.cumulative_us)
    for entry in roots[:top]:
        print(f"    {entry.cumulative_us / 1000:7.1f} ms  {entry.name}  ({origin(entry.name)})")
    for kind in ("ours", "third-party"):
        packages = [(p, us) for p, us in by_package.most_common() if origin(p) == kind]
        shown = ", ".join(f"{p} {us / 1000:.0f}" for p, us in packages[:top])
        print(f"  {kind}, own time by package (ms): {shown}")
