"""Write SVG screenshots of the app's main states: `python tests/ui/make_screenshots.py DIR`.

The states are the snapshot scenes (`scenes.py`): the loop's events for a scripted-provider
run, replayed with a fixed clock, so the pictures change only when the UI does.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.ui.scenes import SCENES, make_app  # noqa: E402


async def shoot(name: str, folder: Path) -> Path:
    scene = SCENES[name]
    app, loop, clock = make_app()
    async with app.run_test(size=scene.size) as pilot:
        await scene.play(app, pilot, loop, clock)
        return Path(app.save_screenshot(filename=f"{name}.svg", path=str(folder)))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: make_screenshots.py DIR", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    folder.mkdir(parents=True, exist_ok=True)
    for name in list(os.environ):
        if name.startswith("TEXTUAL_"):
            del os.environ[name]  # a user's theme or colour settings must not leak in
    os.environ.setdefault("TUI_AGENT_HOME", tempfile.mkdtemp())
    for name in SCENES:
        print(asyncio.run(shoot(name, folder)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
