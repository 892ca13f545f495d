"""The recorded tools: one `Tool` per name the log calls, answering each call with its logged
result, through the loop's real executor and scheduler.

A recorded tool never touches the workspace. It returns once the rerun has written every
record that comes before its result in the log, so parallel calls finish in the recorded
order (live, that order was the tools' timing). A call the log shows stopped (aborted, or cut
off by a crash) waits until the rerun stops it; an aborted call then raises `ToolAborted` with
the output it had, so the executor words its result as it did live.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from tui_agent.context import ToolResultRecorded
from tui_agent.rerun._script import Script, Stop
from tui_agent.tools import Tool, ToolAborted, ToolAccesses, ToolContext
from tui_agent.vocab import ToolResult
from tui_agent.vocab.tools import DENIED

_PARTIAL = "\nOutput before it stopped:\n"


class RecordedArgs(BaseModel):
    """Whatever the model sent: the arguments were judged when the session ran."""

    model_config = ConfigDict(extra="allow")


class Cue:
    """What a recorded tool waits on and tells (the conductor fills it)."""

    def __init__(
        self,
        reached: Callable[[int], Awaitable[None]],
        halt: Callable[[Stop, str | None], Awaitable[None]],
    ) -> None:
        self.reached = reached  # until the rerun has written that many records
        self.halt = halt  # the log says this call was stopped here: stop it


class RecordedTool(Tool[RecordedArgs]):
    Args = RecordedArgs
    description = "A tool of a recorded session: answers with the logged result."

    def __init__(self, script: Script, cue: Cue) -> None:
        self._script = script
        self._cue = cue
        self._positions = {
            record.call_id: index
            for index, record in enumerate(script.records)
            if isinstance(record, ToolResultRecorded)
        }

    def accesses(self, args: RecordedArgs) -> ToolAccesses:
        return ToolAccesses.none()  # nothing to order: the results come in the logged order

    async def execute(self, args: RecordedArgs, ctx: ToolContext) -> ToolResult:
        stop = self._script.hangs.get(ctx.call_id)
        if stop is not None:
            return await self._stopped(stop, ctx)
        position = self._positions.get(ctx.call_id)
        if position is None:
            raise RuntimeError(f'the log has no result for call "{ctx.call_id}"')
        await self._cue.reached(position)
        record = self._script.results[ctx.call_id]
        if ctx.call_id in self._script.answers and (record.display or {}).get("outcome") == DENIED:
            # Its result is the denial the loop words itself: the log's answer said otherwise.
            raise RuntimeError(f'the log shows call "{ctx.call_id}" denied, and the rerun ran it')
        return ToolResult(
            output=record.output,
            is_error=record.is_error,
            note=record.note,
            display=record.display,
            spill_exempt=True,  # spilled (or not) when it ran; the pointer is in the output
        )

    async def _stopped(self, stop: Stop, ctx: ToolContext) -> ToolResult:
        """Stops the rerun where the log shows this call stopped (once every record before its
        result is written: a parallel call may finish first), unless something stopped the
        call already."""
        record = self._script.results.get(ctx.call_id)
        reached = asyncio.ensure_future(
            self._cue.reached(self._positions[ctx.call_id] if record is not None else 0)
        )
        stopped = asyncio.ensure_future(ctx.signal.wait())
        try:
            await asyncio.wait({reached, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not stopped.done():
                await self._cue.halt(stop, ctx.call_id)
                await stopped
        finally:
            reached.cancel()
            stopped.cancel()
        text = record.output if record is not None and isinstance(record.output, str) else ""
        raise ToolAborted(text.split(_PARTIAL, 1)[1] if _PARTIAL in text else "")


# The loop's own plan tool runs for real: it touches nothing, its result is checked, and the
# player's plan pane follows it as the person's did.
RUN_FOR_REAL = frozenset({"todo_write"})


def recorded_tools(script: Script, cue: Cue) -> tuple[Tool[Any], ...]:
    """One recorded tool per name the log's calls use (a tool's name is its class's)."""
    called = {call.name for answer in script.model_calls for call in answer.calls}
    names = sorted(called - RUN_FOR_REAL)
    return tuple(
        type(f"Recorded_{index}", (RecordedTool,), {"name": name})(script, cue)
        for index, name in enumerate(names)
    )
