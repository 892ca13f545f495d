"""SVG snapshots of the main states, recorded from the real loop (fixed size, theme, clock and
ids; see scenes.py): a change in what the loop emits for a scene's script fails its snapshot.

Review every change by eye (`pytest --snapshot-update`, then open the report or render the SVG).
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from tests.ui.scenes import SCENES, play_scene, scene_app


@pytest.mark.parametrize("name", sorted(SCENES))
def test_scene_looks_as_reviewed(name: str, snap_compare: Any) -> None:
    scene = SCENES[name]
    app, loop, clock = scene_app(scene)

    async def run_before(pilot: Pilot[None]) -> None:
        await play_scene(scene, app, pilot, loop, clock)

    assert snap_compare(app, terminal_size=scene.size, run_before=run_before)
