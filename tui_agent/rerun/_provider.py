"""The recorded model: answers each request with the next response of the log, re-chunked.

Requests come in the order the log's model calls were made (step attempts and compaction
summaries); the request itself is not read, since the log does not keep what was sent. Before
each chunk the provider lets the conductor feed the person's inputs that are due and pace the
playback. An answer the log cuts short hangs after its last chunk until the rerun stops it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from tui_agent.rerun._script import ModelCall, Stop
from tui_agent.vocab import (
    LLMError,
    LLMErrorKind,
    LLMRequest,
    StreamEvent,
    StreamFailed,
)


class Stage(Protocol):
    """The conductor as the recorded model sees it."""

    def next_call(self) -> ModelCall | None:
        """The log's next answer; `call_ended` follows once it is streamed (or stopped)."""
        ...

    def call_ended(self) -> None: ...

    async def beat(self) -> None:
        """Before each chunk: feed what is due, wait for the player's pace."""
        ...

    async def halt(self, stop: Stop, call_id: str | None) -> None: ...

    async def forever(self) -> None:
        """Until the rerun cancels the waiting task (a stopped stream, a crash)."""
        ...


class RecordedModel:
    def __init__(self, stage: Stage, name: str, model: str) -> None:
        self._stage = stage
        self.name = name
        self.model = model

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        call = self._stage.next_call()
        if call is None:
            yield StreamFailed(
                error=LLMError(
                    kind=LLMErrorKind.PROVIDER, message="the log holds no more model answers"
                )
            )
            return
        try:
            for event in call.events():
                await self._stage.beat()
                yield event
            if call.stop is not None:
                await self._stage.halt(call.stop, None)
                await self._stage.forever()
        finally:
            self._stage.call_ended()

    async def aclose(self) -> None:
        return None
