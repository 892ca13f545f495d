"""Ctrl+G: edit the draft in the user's editor (`$VISUAL`, else `$EDITOR`, else vi); `/memory`
opens the memory files in it the same way (`open_in_editor`).

The app gives up the terminal while the editor runs (Textual's `suspend`) and takes it back
after; where the terminal cannot be handed over (a headless run), the editor runs without it.
The editor is an asyncio child process, awaited: the event loop keeps running the turn (its
stream, tool pipes and timers) while the person edits. Nothing is drawn meanwhile (a batch
holds the screen's updates; the first frame after it shows all that happened). Saving replaces
the draft; an editor that fails leaves the draft as it was and says why.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from textual.app import App, SuspendNotSupported


def editor_command() -> list[str]:
    return shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")


async def edit_in_editor(app: App[Any], text: str) -> str:
    """The draft after the user edited it; raises `OSError` or `RuntimeError` on failure."""
    folder = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="tui-agent-"))
    try:
        path = folder / "prompt.md"
        await asyncio.to_thread(path.write_text, text, encoding="utf-8")
        await open_in_editor(app, [path])
        edited = await asyncio.to_thread(path.read_text, encoding="utf-8")
        return edited.rstrip("\n")
    finally:
        await asyncio.to_thread(shutil.rmtree, folder, True)


async def open_in_editor(app: App[Any], paths: list[Path]) -> None:
    """Edit `paths` in the user's editor, the app's terminal handed over meanwhile; raises
    `OSError` or `RuntimeError` on failure."""
    command = [*editor_command(), *map(str, paths)]
    try:
        # The batch is entered first and left last: the frame it releases is drawn once
        # the terminal is the app's again.
        with app.batch_update(), app.suspend():
            status = await _run(command, terminal=True)
    except SuspendNotSupported:
        status = await _run(command, terminal=False)
    if status != 0:
        raise RuntimeError(f"{command[0]} exited with status {status}")


async def _run(command: list[str], *, terminal: bool) -> int:
    """Run the editor to its end; with `terminal` it inherits the app's terminal."""
    quiet = None if terminal else subprocess.DEVNULL
    process = await asyncio.create_subprocess_exec(
        *command, stdin=quiet, stdout=quiet, stderr=quiet
    )
    try:
        return await process.wait()
    except asyncio.CancelledError:
        # The app is ending under the editor: the editor must not outlive it.
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise
