"""SVG snapshots of the main states (fixed size, fixed theme, fixed clock; see scenes.py).

Review every change by eye (`pytest --snapshot-update`, then open the report or render the SVG).
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from tests.ui.scenes import SCENES, make_app


@pytest.mark.parametrize("name", sorted(SCENES))
def test_scene_looks_as_reviewed(name: str, snap_compare: Any) -> None:
    scene = SCENES[name]
    app, loop, clock = make_app()

    async def run_before(pilot: Pilot[None]) -> None:
        await scene.play(app, pilot, loop, clock)

    assert snap_compare(app, terminal_size=scene.size, run_before=run_before)
