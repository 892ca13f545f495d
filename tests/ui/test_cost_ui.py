"""Money in the app, on the real loop (scripted provider priced in config.toml): the status
bar's cost and tooltip, `/cost`, and the warning at 80 % of a budget."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.ui.real_loop import scripted_loop, until
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.view_model import MarkerBlock

# $2/M input, $0.20/M cache reads, $2.50/M cache writes, $10/M output.
PRICES = """
[models.scripted]
price_input_per_mtok = 2.0
price_output_per_mtok = 10.0
price_cache_read_per_mtok = 0.2
price_cache_write_per_mtok = 2.5
"""
# Step 1: 1000×2 + 4000×2.5 + 200×10 = 2000 + 10000 + 2000 = 14000 per M = $0.0140
# Step 2: 500×2 + 4000×0.2 + 100×10 = 1000 + 800 + 1000 = 2800 per M = $0.0028
STEPS = [
    {
        "text": "Reading.",
        "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}],
        "usage": {"input_other": 1000, "input_cache_creation": 4000, "output": 200},
        "chunk_delay_s": 0,
    },
    {
        "text": "Done.",
        "usage": {"input_other": 500, "input_cache_read": 4000, "output": 100},
        "chunk_delay_s": 0,
    },
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha\n")
    return folder


def configure(text: str) -> None:
    (Path(os.environ["TUI_AGENT_HOME"]) / "config.toml").write_text(text)


def markers(app: TuiAgentApp, kind: str) -> list[str]:
    return [b.text for b in app.vm.blocks if isinstance(b, MarkerBlock) and b.kind == kind]


async def test_the_status_bar_and_cost_show_what_the_turn_cost(workspace: Path) -> None:
    configure(PRICES)
    loop = await scripted_loop(STEPS, workspace=workspace)
    app = TuiAgentApp(loop)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await loop.submit("read a.txt")
            await until(pilot, lambda: "$0.0168" in str(app.status_bar.render()))
            tip = str(app.status_bar.tooltip)
            assert "input 9,500 tokens: 4,000 cache reads, 4,000 cache writes" in tip
            assert "$0.0168" in tip
            await until(pilot, lambda: not app.vm.busy)
            await pilot.press(*"/cost", "enter")
            await until(pilot, lambda: bool(markers(app, "info")))
            table = markers(app, "info")[-1]
            assert "prices: config.toml" in table
            session = next(line for line in table.splitlines() if line.startswith("session"))
            assert session.split() == ["session", "9.5k", "4.0k", "4.0k", "300", "$0.0168"]
            assert "read_file" in table  # its result, priced as input
    finally:
        await app.loop.close()


async def test_the_app_warns_once_at_80_percent_of_the_budget(workspace: Path) -> None:
    configure("max_budget_usd = 0.02\n" + PRICES)  # $0.0168 is 84 % of $0.02
    loop = await scripted_loop(STEPS, workspace=workspace)
    app = TuiAgentApp(loop)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await loop.submit("read a.txt")
            await until(
                pilot, lambda: not app.vm.busy and "$0.0168" in str(app.status_bar.render())
            )
            assert markers(app, "warning") == [
                "$0.0168 spent: 84% of the session's budget ($0.0200)."
            ]
    finally:
        await app.loop.close()
