from __future__ import annotations

from tests.kernel.fakes import ScriptedRunner, calls, ok, rig, text


async def test_text_turn() -> None:
    r = await rig(text("hel", "lo"))
    await r.run("hi")
    assert r.lines() == ["user:hi", "assistant:hello"]
    assert r.agent.errors == []


async def test_tool_turn() -> None:
    r = await rig(calls(("c1", "echo")), text("done"), runner=ScriptedRunner(echo=ok("out")))
    await r.run("hi")
    assert r.lines() == ["user:hi", "assistant:[c1]", "tool:out", "assistant:done"]
    assert r.agent.errors == []
