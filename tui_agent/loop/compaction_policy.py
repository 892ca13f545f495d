"""When the loop compacts its history: before a step whose request would pass `COMPACT_AT` of
the context window, and after a step the provider refused for overflow (then the step is
retried); and how (`summariser`: the model summarises the older entries, `context.compact`).
`build_loop` registers these on the service.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from tui_agent.context import CompactionFailed, CompactionResult, compact, estimate_tokens
from tui_agent.llm import Provider
from tui_agent.loop.hooks import Handler, Next
from tui_agent.loop.service import AgentLoopService, Compactor, ErrorContext, StepBeginContext
from tui_agent.vocab import HistoryEntry, ToolSpec

COMPACT_AT = 0.85  # of the model's context window, checked before every step


def summariser(
    provider: Provider, system: str, tool_specs: tuple[ToolSpec, ...], context_window: int
) -> Compactor:
    async def summarise(entries: Sequence[HistoryEntry]) -> CompactionResult | CompactionFailed:
        return await compact(
            entries,
            provider,
            provider.model,
            system=system,
            tools=tool_specs,
            context_window=context_window,
        )

    return summarise


def compact_and_retry(service: AgentLoopService) -> Callable[[ErrorContext], Awaitable[bool]]:
    async def handle(ctx: ErrorContext) -> bool:
        if not await service.compact_history(service.engine.history):
            return False
        ctx.retry()
        return True

    return handle


def proactive_compaction(service: AgentLoopService, system: str) -> Handler[StepBeginContext]:
    async def hook(ctx: StepBeginContext, next_: Next[StepBeginContext]) -> None:
        window = service.info.context_window
        view = service.view(ctx.history)
        if window and estimate_tokens(view, system=system) > COMPACT_AT * window:
            await service.compact_history(ctx.history)
        await next_(None)

    return hook
