"""An abort in every observable state yields a documented value, never an exception."""

from __future__ import annotations

import pytest

from tests.kernel.fakes import (
    FakeClock,
    Gate,
    ScriptedRunner,
    calls,
    fail,
    gated,
    hang_forever,
    prompt,
    rig,
    settle,
    text,
)
from tui_agent.kernel import TurnEnded
from tui_agent.vocab import RequestSent, TextDelta

STATES = ["before_request_sent", "mid_stream", "retrying", "tools_running", "tools_aborting"]


@pytest.mark.parametrize("where", STATES)
async def test_abort_in_every_turn_state_ends_the_turn_aborted(where: str) -> None:
    hold = Gate()
    clock = FakeClock()
    runner = ScriptedRunner(slow=gated(hold, "late"), stuck=hang_forever())
    first = {
        "before_request_sent": [hold],
        "mid_stream": [RequestSent(), TextDelta(text="par"), hold],
        "retrying": fail(),
        "tools_running": calls(("c1", "slow")),
        "tools_aborting": calls(("c1", "stuck")),
    }[where]
    r = await rig(first, text("after"), runner=runner, clock=clock)
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.abort("stop")
    if where == "tools_aborting":
        assert r.agent.turn_state == "aborting"
        await r.agent.abort("stop")
    if where == "tools_running":
        hold.open()
    await r.agent.idle()
    [ended] = r.of(TurnEnded)
    assert ended.outcome == "aborted" and ended.reason == "stop"
    assert r.agent.state == "idle.ready" and r.agent.turn_state is None
    assert r.agent.errors == []
