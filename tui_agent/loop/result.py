"""Turn outcomes as values: `Completed | Failed | Cancelled` (docs/loop-spec.md §5.1)."""

from __future__ import annotations

from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop.events import TurnResult
from tui_agent.vocab import TurnError


@dataclass(frozen=True)
class Completed:
    steps: int
    truncated: bool = False
    stop_reason: str | None = None


@dataclass(frozen=True)
class Failed:
    steps: int
    error: TurnError


@dataclass(frozen=True)
class Cancelled:
    steps: int
    reason: str


LoopRunResult = Completed | Failed | Cancelled


def to_turn_result(result: LoopRunResult) -> TurnResult:
    """The wire form observers see (`turn.finished.result`)."""
    match result:
        case Completed(steps, truncated, stop_reason):
            return TurnResult(
                type="completed", steps=steps, truncated=truncated, stop_reason=stop_reason
            )
        case Failed(steps, error):
            return TurnResult(
                type="failed", steps=steps, error={"code": error.code, "message": error.message}
            )
        case Cancelled(steps, reason):
            return TurnResult(type="cancelled", steps=steps, reason=reason)
