"""The tools adapter: a call stopped while it waits for the rest of its step's batch."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from tests.tools.tool_fakes import echo, executor, make_tool
from tui_agent.loop.adapters.tools import USER_STOPPED_CALL, LoopToolRunner
from tui_agent.vocab import AbortSignal, ToolCall, ToolUpdate, tool_status


@dataclass
class Context:
    signal: AbortSignal = field(default_factory=AbortSignal)

    def on_update(self, update: ToolUpdate) -> None:
        pass

    def on_state(self, state: str) -> None:
        pass

    def detach(self, ack: str) -> None:
        pass


async def test_a_call_stopped_before_its_batch_starts_says_it_never_ran(tmp_path: Path) -> None:
    runner = LoopToolRunner(executor(tmp_path, make_tool("echo", echo)))
    first = ToolCall(id="a", name="echo", arguments='{"text": "a"}')
    second = ToolCall(id="b", name="echo", arguments='{"text": "b"}')
    runner.begin_batch([first, second], AbortSignal())
    context = Context()
    parked = asyncio.ensure_future(runner.run(first, context))
    await asyncio.sleep(0)  # parked: the batch waits for "b"
    context.signal.abort(USER_STOPPED_CALL)
    result = await parked
    assert result.text.startswith('The user cancelled "echo" before it started')
    assert tool_status(is_error=result.is_error, display=result.display) == "aborted"
    assert (await runner.run(second, Context())).text == "b"  # the rest of the batch runs
