"""Costs through the loop's public API: sub-agents priced and counted against the session's
budget while they run (the model double routes requests by job, as in test_subagents)."""

from __future__ import annotations

import pytest

from tests.loop.conftest import LoopMaker
from tests.loop.test_subagents import RoutedModel, task
from tests.support.fake_model import Step, calls, text
from tui_agent.loop import events as ev
from tui_agent.loop.costs import Budget, Metering
from tui_agent.loop.service import AgentLoopService
from tui_agent.usage import PriceOverride, Pricer

# $1/M input, $10/M output. `calls` steps report 100 input and 10 output tokens:
# 100×1 + 10×10 = 200 per M = $0.0002; `text(usage=n)` reports 10n input and n output.
PRICES = PriceOverride(input=1.0, output=10.0)


def routes() -> dict[str, list[Step]]:
    return {
        "PARENT JOB": [calls(task("read a", "CHILD JOB: read a.txt"), prefix="p"), text("Done.")],
        "CHILD JOB": [calls(("read_file", {"path": "a.txt"}), prefix="c"), text("alpha", usage=7)],
    }


async def priced_loop(make_loop: LoopMaker, model: RoutedModel, budget: Budget) -> AgentLoopService:
    metering = Metering(Pricer(model.model, provider="scripted", override=PRICES), budget)
    service, _, _ = await make_loop([], model=model, metering=metering)
    return service


async def test_a_sub_agents_cost_is_its_own_row_and_part_of_the_session(
    make_loop: LoopMaker,
) -> None:
    model = RoutedModel(routes())
    budget = Budget()
    service = await priced_loop(make_loop, model, budget)
    finished: list[ev.TurnFinished] = []
    service.subscribe(lambda e: finished.append(e) if isinstance(e, ev.TurnFinished) else None)
    await (await service.submit("PARENT JOB")).result()
    report = service.costs()
    # Child: 100 + 70 input, 10 + 7 output: 170×1 + 17×10 = 340 per M.
    assert [(s.label, s.cost_usd) for s in report.subagents] == [("read a", pytest.approx(0.00034))]
    # Parent: 100 + 100 input, 10 + 10 output: 200 + 200 = 400 per M; with the child's 340.
    assert report.session.cost_usd == pytest.approx(0.00074)
    assert budget.spent == pytest.approx(0.00074)
    assert finished[-1].usage is not None and finished[-1].usage.cost_usd == pytest.approx(0.00074)
    assert [t.name for t in report.tools] == ["task"]  # the child's calls are its own


async def test_a_sub_agent_stops_at_the_sessions_budget_before_its_first_request(
    make_loop: LoopMaker,
) -> None:
    model = RoutedModel(routes())
    service = await priced_loop(make_loop, model, Budget(max_session_usd=0.0002))
    result = await (await service.submit("PARENT JOB")).result()
    # The parent's first request spent $0.0002, the whole budget: nothing else goes out.
    assert len(model.requests_for("PARENT JOB")) == 1
    assert model.requests_for("CHILD JOB") == []
    assert result.type == "failed" and result.error is not None
    assert result.error["code"] == "loop.budget_exceeded"
    assert "$0.0002 of its $0.0002 budget" in result.error["message"]
