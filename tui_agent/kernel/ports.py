"""The ports the kernel needs from the world, as Protocols. Adapters in `loop/adapters` fill them.

- `Requester`: streams ONE LLM attempt for the history so far. It yields `RequestSent` once the
  request is on the wire (after the loop's step gate), then deltas, and ends with `Finished` or
  `StreamFailed`. Cancelling the consuming task must close the attempt at once.
- `ToolRunner`: runs one call, reporting where it is through `ctx.on_state`. `begin_batch`
  announces every call of a step first, so the runner can hand the whole batch to the
  scheduler; `run` is then called once per call.
- `ToolHooks`: optional `prepare` (replace or deny a call) and `finish` (rewrite a result). A
  hook that never prepares says so (`prepares = False`), and one that can finish a result at
  once does it in `finish_at_once`: the tool machine then skips those phases (two microsteps
  and two invokes less per call). Subclass it to inherit those two defaults.
- `PromptGate`: optional verdict per queued prompt: pass, block, or pass rewritten.
- `Sleep` / `Random` / `Clock`: the only time and randomness the kernel uses, so tests control
  them (`Clock` only names the hour in a "retry after HH:MM" message).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Protocol

from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import (
    AbortSignal,
    HistoryEntry,
    Message,
    StreamEvent,
    ToolCall,
    ToolResult,
    ToolUpdate,
)

Sleep = Callable[[float], Awaitable[None]]
Random = Callable[[], float]
Clock = Callable[[], float]


class Requester(Protocol):
    def stream(
        self, history: Sequence[HistoryEntry], signal: AbortSignal
    ) -> AsyncIterator[StreamEvent]: ...


class ToolRunContext(Protocol):
    @property
    def signal(self) -> AbortSignal: ...

    def on_update(self, update: ToolUpdate) -> None: ...

    def on_state(self, state: str) -> None:
        """Where the call is in the runner: queued, awaiting_approval or running."""
        ...

    def detach(self, ack: str) -> None: ...


class ToolRunner(Protocol):
    def begin_batch(self, calls: Sequence[ToolCall], signal: AbortSignal) -> None: ...

    async def run(self, call: ToolCall, ctx: ToolRunContext) -> ToolResult: ...


@dataclass(frozen=True)
class Proceed:
    call: ToolCall


@dataclass(frozen=True)
class Deny:
    result: ToolResult


class ToolHooks(Protocol):
    prepares: bool = True
    """False when `prepare` would always proceed with the call as it is: calls skip it."""

    async def prepare(self, call: ToolCall) -> Proceed | Deny: ...

    def finish_at_once(self, call: ToolCall, result: ToolResult) -> ToolResult | None:
        """The after-tool work done synchronously, as the runner returns; None when this
        result needs `finish` (the default: always)."""
        return None

    async def finish(self, call: ToolCall, result: ToolResult) -> ToolResult: ...


@dataclass(frozen=True)
class GateVerdict:
    block: bool = False
    message: Message | None = None  # pass with this rewrite


class PromptGate(Protocol):
    async def __call__(self, entry: HistoryEntry) -> GateVerdict: ...
