"""Real hook commands for the hook tests: a Python script that records the JSON it gets and
answers as its mode says, and helpers that read what it recorded."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

RECORDER = r"""
import json, os, sys, time
data = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(data) + "\n")
mode = sys.argv[2] if len(sys.argv) > 2 else "ok"
if mode == "block":
    print("blocked: " + data["hook_event_name"], file=sys.stderr)
    sys.exit(2)
if mode == "block-once" and not data.get("stop_hook_active"):
    print("add a test first", file=sys.stderr)
    sys.exit(2)
if mode == "fail":
    print("something broke", file=sys.stderr)
    sys.exit(1)
if mode == "context":
    print("the build command is make")
if mode.startswith("{"):
    print(mode)
if mode == "hang":
    with open(sys.argv[1] + ".pid", "w") as f:
        f.write(str(os.getpid()))
    time.sleep(120)
"""


def recorder(tmp: Path, mode: str = "ok", log: str = "hooks.jsonl") -> tuple[str, Path]:
    """A hook command that records its input to `tmp/log` and answers as `mode` says."""
    script = tmp / "recorder.py"
    if not script.exists():
        script.write_text(RECORDER)
    path = tmp / log
    return shlex.join([sys.executable, str(script), str(path), mode]), path


def recorded(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
