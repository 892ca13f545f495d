"""Ordered registrations (docs/loop-spec.md §5.4): hook slots, and the error-handler chain.

`OrderedRegistry` holds `(id, item)` entries. `register` places an entry before or after another
id, replaces an entry with the same id in place, and returns a disposable that removes exactly
that entry. Error handlers use it as it is (the first match runs alone).

`OrderedHookSlot` runs its handlers middleware-style: `run(ctx, terminal)` calls each as
`handler(ctx, next)`; `next(override)` continues with the override (or the current context);
not calling `next` skips everything downstream, the terminal included; calling it twice runs
the rest of the chain twice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, Literal, TypeVar

from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import AbortSignal, FinishReason, HistoryEntry, Message, TokenUsage, TurnError

C = TypeVar("C")
T = TypeVar("T")
Next = Callable[[C | None], Awaitable[None]]
Handler = Callable[[C, Next[C]], Awaitable[None]]


class HookOrderError(ValueError):
    """A registration named both `before` and `after`, or a target id that does not exist."""


@dataclass(eq=False)
class _Entry(Generic[T]):
    id: str
    item: T


class Disposable:
    def __init__(self, dispose: Callable[[], None]) -> None:
        self._dispose: Callable[[], None] | None = dispose

    def dispose(self) -> None:
        if self._dispose is not None:
            self._dispose()
            self._dispose = None


class OrderedRegistry(Generic[T]):
    def __init__(self) -> None:
        self._entries: list[_Entry[T]] = []

    @property
    def ids(self) -> list[str]:
        return [entry.id for entry in self._entries]

    def items(self) -> list[T]:
        """A copy, in order: registering or disposing while iterating is safe."""
        return [entry.item for entry in self._entries]

    def register(
        self, item_id: str, item: T, *, before: str | None = None, after: str | None = None
    ) -> Disposable:
        if before is not None and after is not None:
            raise HookOrderError(f"hook {item_id!r}: give `before` or `after`, not both")
        entry = _Entry(item_id, item)
        existing = self._index(item_id)
        if existing is not None and before is None and after is None:
            self._entries[existing] = entry
        else:
            if existing is not None:
                del self._entries[existing]
            target = before if before is not None else after
            if target is None:
                self._entries.append(entry)
            else:
                index = self._index(target)
                if index is None:
                    raise HookOrderError(f"hook {item_id!r}: no hook {target!r} to order against")
                self._entries.insert(index if before is not None else index + 1, entry)

        def dispose() -> None:
            if entry in self._entries:
                self._entries.remove(entry)

        return Disposable(dispose)

    def _index(self, item_id: str) -> int | None:
        for index, entry in enumerate(self._entries):
            if entry.id == item_id:
                return index
        return None


class OrderedHookSlot(OrderedRegistry[Handler[C]]):
    async def run(self, ctx: C, terminal: Callable[[C], Awaitable[None]] | None = None) -> None:
        handlers = self.items()

        async def step(index: int, current: C) -> None:
            if index == len(handlers):
                if terminal is not None:
                    await terminal(current)
                return

            async def next_(override: C | None = None) -> None:
                await step(index + 1, current if override is None else override)

            await handlers[index](current, next_)

        await step(0, ctx)


# -- what each slot's handlers receive ---------------------------------------------------------
@dataclass
class StepBeginContext:
    """`on_will_begin_step`, before every attempt; a handler that does not call `next` (or
    sets `signal`) keeps the request from going out."""

    turn_id: int
    step: int  # 1 for the turn's first
    signal: AbortSignal
    history: Sequence[HistoryEntry]  # the kernel's; `service.view(history)` is the model's


@dataclass
class StepDoneContext:
    """`on_did_finish_step`, after each step; `stop_turn` ends the turn before the next request
    (the step gate waits for the whole chain)."""

    turn_id: int
    step: int
    usage: TokenUsage | None
    finish_reason: FinishReason | None
    stop_turn: bool = False


@dataclass
class PromptContext:
    """`on_before_submit_prompt`, before a queued prompt enters history: `block` drops it,
    a new `message` replaces it."""

    message: Message
    block: bool = False


@dataclass
class StopContext:
    """`on_turn_stop`, when a turn would end with the model's answer: a handler that sets
    `continue_with` keeps the turn going with that text as the model's next input."""

    turn_id: int
    last_text: str
    continued: bool  # the turn goes on already because a handler asked it to
    continue_with: str | None = None


@dataclass
class CompactContext:
    """`on_before_compact`, before a summary replaces history: `block` keeps it as it is."""

    trigger: Literal["manual", "auto"]
    block: bool = False
    reason: str = ""


@dataclass
class ErrorContext:
    """What an error handler gets: the failed turn's error, and `retry()` to continue it."""

    turn_id: int
    step: int
    error: TurnError
    retry: Callable[[], None]


@dataclass(frozen=True)
class LoopErrorHandler:
    """One link of the error-handler chain: the first whose `match` accepts the error runs;
    `handle` returns whether it dealt with it (with `retry()` called, the turn goes on)."""

    id: str
    match: Callable[[TurnError], bool]
    handle: Callable[[ErrorContext], Awaitable[bool]]
