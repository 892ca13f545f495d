"""The status bar at 80x24: segments give way by priority, and the approval
mode, yolo above all, always shows."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.ui.fake_loop import INFO, FakeLoop
from tests.ui.real_loop import until
from tui_agent.loop import events as ev
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.widgets.status_bar import Segment, _fit
from tui_agent.vocab import ApprovalMode, PlanItem

LONG = replace(INFO, model="a-rather-long-model-name-2026-11-29", session_id="s-20261129-abcdef")


@pytest.mark.parametrize("mode", ["yolo", "plan", "auto-edit"])
async def test_at_80_columns_the_mode_and_the_plan_show(mode: ApprovalMode) -> None:
    loop = FakeLoop(info=replace(LONG, approval_mode=mode))
    app = TuiAgentApp(loop)
    async with app.run_test(size=(80, 24)) as pilot:
        todos = (PlanItem(content="read", status="completed"), PlanItem(content="fix"))
        loop.emit(ev.PlanUpdated(todos=todos))
        await until(pilot, lambda: "plan 1/2" in str(app.status_bar.render()))
        shown = str(app.status_bar.render())
        assert f"  {mode}" in shown and "…" not in shown
        assert "s-20261129-abcdef" not in shown  # the session id gave way first


def test_segments_give_way_lowest_priority_first() -> None:
    parts = [Segment("model", "", 60), Segment("idle", "", 90), Segment("yolo", "", 100)]
    assert [p.text for p in _fit(parts, 12)] == ["idle", "yolo"]
    assert [p.text for p in _fit(parts, 4)] == ["yolo"]
    assert _fit(parts, 0) == parts
