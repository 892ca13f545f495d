"""Write SVG screenshots of the app's main states: `python tests/ui/make_screenshots.py DIR`.

The states are the snapshot scenes (`scenes.py`): each recorded from the real loop running its
script on the scripted provider, replayed with a fixed clock and fixed ids, so the pictures show
what the app really does and change only when the app or the loop does.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.ui.scenes import SCENES, play_scene, scene_app  # noqa: E402


async def shoot(name: str, folder: Path) -> Path:
    scene = SCENES[name]
    app, loop, clock = scene_app(scene)
    async with app.run_test(size=scene.size) as pilot:
        await play_scene(scene, app, pilot, loop, clock)
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
