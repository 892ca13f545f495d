"""The requester adapter: fills the kernel's Requester port with a provider, behind the gate.

Before EVERY attempt it awaits the loop's step gate (the `on_will_begin_step` hooks, which may
compact; the step limit is the turn machine's, not the gate's). Only after the gate does it
build the request, fresh from context memory and the tool registry, so whatever a hook changed
is what the model sees. The kernel's own view of the history is passed to `build_request`,
which decides what to take from it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from tui_agent.lazy_dataclass import dataclass
from tui_agent.llm import Provider
from tui_agent.vocab import (
    AbortSignal,
    HistoryEntry,
    LLMError,
    LLMErrorKind,
    LLMRequest,
    RequestSent,
    StreamEvent,
    StreamFailed,
)

GATE_STOPPED = "The agent loop gate stopped the step."


@dataclass(frozen=True)
class GateOutcome:
    proceed: bool  # False: the step does not run; it fails as aborted (GATE_STOPPED)


class LoopRequester:
    def __init__(
        self,
        model: Provider,
        gate: Callable[[Sequence[HistoryEntry], AbortSignal], Awaitable[GateOutcome]],
        build_request: Callable[[Sequence[HistoryEntry]], LLMRequest],
    ) -> None:
        self._model = model
        self._gate = gate
        self._build_request = build_request

    async def stream(
        self, history: Sequence[HistoryEntry], signal: AbortSignal
    ) -> AsyncIterator[StreamEvent]:
        outcome = await self._gate(history, signal)
        if not outcome.proceed or signal.aborted:
            yield StreamFailed(error=LLMError(kind=LLMErrorKind.ABORT, message=GATE_STOPPED))
            return
        request = self._build_request(history)
        yield RequestSent()
        stream = self._model.stream(request)
        try:
            async for event in stream:
                yield event
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
