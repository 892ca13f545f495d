"""Ctrl+G: edit the draft in the user's editor (`$VISUAL`, else `$EDITOR`, else vi).

The app gives up the terminal while the editor runs (Textual's `suspend`) and takes it back
after; where the terminal cannot be handed over (a headless run), the editor runs without it.
Saving replaces the draft; an editor that fails leaves the draft as it was and says why.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from textual.app import App, SuspendNotSupported


def editor_command() -> list[str]:
    return shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")


def edit_in_editor(app: App[Any], text: str) -> str:
    """The draft after the user edited it; raises `OSError` or `RuntimeError` on failure."""
    with tempfile.TemporaryDirectory(prefix="tui-agent-") as folder:
        path = Path(folder) / "prompt.md"
        path.write_text(text, encoding="utf-8")
        command = [*editor_command(), str(path)]
        try:
            with app.suspend():
                done = subprocess.run(command, check=False)
        except SuspendNotSupported:
            done = subprocess.run(command, check=False, capture_output=True)
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} exited with status {done.returncode}")
        return path.read_text(encoding="utf-8").rstrip("\n")
