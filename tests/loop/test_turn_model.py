"""A custom command's `model:`: the turn its prompt opens runs on that model (its requests name
it, a sub-agent started in it too), the next turn on the session's; each step is priced by the
model that served it, live and when the session is reopened; a model that cannot be used is
refused before anything is queued."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.loop.conftest import LoopMaker
from tests.loop.test_subagents import RoutedModel, task
from tests.support.fake_model import FakeModel, calls, text
from tui_agent.context import StepEnd, read_log
from tui_agent.loop import events as ev
from tui_agent.loop.costs import Budget, Metering
from tui_agent.loop.replay import replay
from tui_agent.loop.turn_model import ModelRefused, TurnModel
from tui_agent.rerun import check_path
from tui_agent.usage import PriceOverride, Pricer

SESSION = PriceOverride(input=1.0, output=10.0)  # $ per M tokens
CHEAP = PriceOverride(input=0.1, output=1.0)  # a tenth


def cheap_model(name: str) -> TurnModel:
    if name != "cheap-model":
        raise ModelRefused(f"model {name} cannot be used: NOPE_API_KEY is not set")
    return TurnModel("cheap-model", Pricer(name, provider="scripted", override=CHEAP), 1_000)


def metering(model: str) -> Metering:
    """The session's prices, and those of another model a logged step names (a reopened
    session's; `session.open_loop` reads them from config.toml)."""
    session = Pricer(model, provider="scripted", override=SESSION)
    return Metering(session, Budget(), others=lambda name: cheap_model(name).pricer)


async def test_a_commands_turn_runs_and_is_priced_on_its_model_and_the_next_on_the_sessions(
    make_loop: LoopMaker,
) -> None:
    model = FakeModel([text("cheap answer"), text("session answer")])
    service, _, log = await make_loop(
        [], model=model, metering=metering(model.model), turn_models=cheap_model
    )
    started: list[ev.TurnStarted] = []
    service.subscribe(lambda e: started.append(e) if isinstance(e, ev.TurnStarted) else None)
    await (await service.submit("review", model="cheap-model")).result()
    after_first = service.costs()
    await (await service.submit("plain")).result()
    report = service.costs()

    first, second = model.requests
    assert (first.model, first.max_tokens) == ("cheap-model", 1_000)
    assert second.model == "fake-model"
    assert [e.model for e in started] == ["cheap-model", None]
    # `text` steps use 100 input and 10 output tokens: 100×0.1 + 10×1 = 20 per M on the cheap
    # model, 100×1 + 10×10 = 200 per M on the session's.
    assert after_first is not None and after_first.session.cost_usd == pytest.approx(0.00002)
    assert report is not None and report.session.cost_usd == pytest.approx(0.00022)
    assert report.model == "fake-model"  # the session is back on its model
    await service.close()
    steps = [r for r in read_log(log) if isinstance(r, StepEnd)]
    assert [s.model for s in steps] == ["cheap-model", None]
    # `tui-agent replay --check` runs the command's turn on its model again.
    verdict = await check_path(log)
    assert verdict.ok, verdict.describe()

    # Reopened, the session prices each step by the model that served it, as it ran.
    records = read_log(log)
    reopened, _, _ = await make_loop(
        [],
        model=FakeModel([]),
        metering=metering(model.model),
        turn_models=cheap_model,
        transcript=replay(records, context_window=128_000),
    )
    resumed = reopened.costs()
    assert resumed is not None and resumed.session.cost_usd == pytest.approx(0.00022)
    # And its transcript says again which turn ran on the command's model.
    shown = [e.model for e in reopened.transcript() if isinstance(e, ev.TurnStarted)]
    assert shown == ["cheap-model", None]


async def test_a_sub_agent_started_in_the_turn_runs_on_the_turns_model(
    make_loop: LoopMaker,
) -> None:
    model = RoutedModel(
        {
            "PARENT JOB": [calls(task("look", "CHILD JOB: say hi"), prefix="p"), text("Done.")],
            "CHILD JOB": [text("hi")],
        }
    )
    service, _, _ = await make_loop([], model=model, turn_models=cheap_model)
    await (await service.submit("PARENT JOB", model="cheap-model")).result()
    assert {r.model for r in model.requests_for("PARENT JOB")} == {"cheap-model"}
    assert {r.model for r in model.requests_for("CHILD JOB")} == {"cheap-model"}


async def test_a_model_that_cannot_be_used_is_refused_and_nothing_is_queued(
    make_loop: LoopMaker, tmp_path: Path
) -> None:
    model = FakeModel([text("never")])
    service, _, _ = await make_loop([], model=model, turn_models=cheap_model)
    with pytest.raises(ModelRefused, match="NOPE_API_KEY is not set"):
        await service.submit("review", model="dear-model")
    await service.settled()
    assert model.requests == [] and service.history() == []


async def test_a_command_merged_with_other_queued_prompts_says_its_turn_is_on_the_sessions(
    make_loop: LoopMaker,
) -> None:
    model = FakeModel([text("all three")])
    service, _, _ = await make_loop([], model=model, turn_models=cheap_model)
    notices: list[str] = []
    service.subscribe(lambda e: notices.append(e.text) if isinstance(e, ev.Notice) else None)
    # Submitted together, before the turn opens: the queue enters it as one.
    handles = [
        await service.submit("busy"),
        await service.submit("review", model="cheap-model"),
        await service.submit("and this"),
    ]
    for handle in handles:
        await handle.result()
    (request,) = model.requests
    assert request.model == "fake-model" and len(request.messages) == 3
    assert any("runs on the session's model, not cheap-model" in n for n in notices)


async def test_a_command_steered_into_a_running_turn_says_the_turn_keeps_its_model(
    make_loop: LoopMaker,
) -> None:
    release = asyncio.Event()
    first = calls(("read_file", {"path": "a.txt"}))
    first.hold = release
    model = FakeModel([first, text("done")])
    service, _, _ = await make_loop([], model=model, turn_models=cheap_model)
    notices: list[str] = []
    service.subscribe(lambda e: notices.append(e.text) if isinstance(e, ev.Notice) else None)
    started = asyncio.Event()
    service.subscribe(lambda e: started.set() if isinstance(e, ev.StepStarted) else None)
    running = await service.submit("busy")
    await started.wait()
    await service.submit("review", model="cheap-model", steer_if_active=True)
    release.set()
    await running.result()
    assert [r.model for r in model.requests] == ["fake-model", "fake-model"]
    assert any("runs on the session's model, not cheap-model" in n for n in notices)
