"""A provider double for loop tests: plays lists of stream events, one list per request.

Steps are built with `text()`, `calls()`, `fail()`; a step may hold on an `asyncio.Event`
(`hold=`) so a test can act while the stream is open. Every request is kept for assertions.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from tui_agent.vocab import (
    Finish,
    Finished,
    FinishReason,
    LLMError,
    LLMErrorKind,
    LLMRequest,
    StreamEvent,
    StreamFailed,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
    UsageReported,
)


@dataclass
class Step:
    events: list[StreamEvent]
    hold: asyncio.Event | None = None  # streams the first event, then waits for this


def text(reply: str, *, usage: int = 10, finish: FinishReason = FinishReason.END_TURN) -> Step:
    return Step(
        [
            *(TextDelta(text=reply[i : i + 4]) for i in range(0, len(reply), 4)),
            UsageReported(usage=TokenUsage(input_other=usage * 10, output=usage)),
            Finished(finish=Finish(reason=finish, raw=finish.value)),
        ]
    )


def calls(*specs: tuple[str, dict[str, Any]], prefix: str = "call", say: str = "") -> Step:
    events: list[StreamEvent] = [TextDelta(text=say)] if say else []
    for index, (name, arguments) in enumerate(specs):
        events.append(
            ToolCallDelta(
                index=index, id=f"{prefix}_{index}", name=name, arguments=json.dumps(arguments)
            )
        )
    events.append(UsageReported(usage=TokenUsage(input_other=100, output=10)))
    events.append(Finished(finish=Finish(reason=FinishReason.TOOL_USE, raw="tool_calls")))
    return Step(events)


def fail(kind: LLMErrorKind, message: str = "boom", **fields: Any) -> Step:
    return Step([StreamFailed(error=LLMError(kind=kind, message=message, **fields))])


@dataclass
class FakeModel:
    steps: list[Step]
    name: str = "scripted"
    model: str = "fake-model"
    requests: list[LLMRequest] = field(default_factory=list)

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        async for event in play_next(self.steps):
            yield event

    async def aclose(self) -> None:
        return None


async def play_next(steps: list[Step]) -> AsyncIterator[StreamEvent]:
    """Stream the first of `steps` (taking it off), or a plain answer when none is left."""
    if not steps:
        yield TextDelta(text="(no more steps)")
        yield Finished(finish=Finish(reason=FinishReason.END_TURN))
        return
    step = steps.pop(0)
    for index, event in enumerate(step.events):
        yield event
        if index == 0 and step.hold is not None:
            await step.hold.wait()
