"""Ordered hook slots, middleware-style (spec 5.4); the error-handler chain uses the same order.

A slot holds `(id, handler)` entries. `register` places an entry before or after another id,
replaces an entry with the same id, and returns a disposable that removes exactly that entry.
`run(ctx, terminal)` calls each handler as `handler(ctx, next)`: `next(override)` continues with
the override (or the current context); not calling `next` skips everything downstream, the
terminal included; calling it twice runs the rest of the chain twice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

C = TypeVar("C")
Next = Callable[[C | None], Awaitable[None]]
Handler = Callable[[C, Next[C]], Awaitable[None]]


class HookOrderError(ValueError):
    """A registration named both `before` and `after`, or a target id that does not exist."""


@dataclass(eq=False)
class _Entry(Generic[C]):
    id: str
    handler: Handler[C]


class Disposable:
    def __init__(self, dispose: Callable[[], None]) -> None:
        self._dispose: Callable[[], None] | None = dispose

    def dispose(self) -> None:
        if self._dispose is not None:
            self._dispose()
            self._dispose = None


class OrderedHookSlot(Generic[C]):
    def __init__(self) -> None:
        self._entries: list[_Entry[C]] = []

    @property
    def ids(self) -> list[str]:
        return [entry.id for entry in self._entries]

    def register(
        self,
        hook_id: str,
        handler: Handler[C],
        *,
        before: str | None = None,
        after: str | None = None,
    ) -> Disposable:
        if before is not None and after is not None:
            raise HookOrderError(f"hook {hook_id!r}: give `before` or `after`, not both")
        entry = _Entry(hook_id, handler)
        existing = self._index(hook_id)
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
                    raise HookOrderError(f"hook {hook_id!r}: no hook {target!r} to order against")
                self._entries.insert(index if before is not None else index + 1, entry)

        def dispose() -> None:
            if entry in self._entries:
                self._entries.remove(entry)

        return Disposable(dispose)

    async def run(self, ctx: C, terminal: Callable[[C], Awaitable[None]] | None = None) -> None:
        entries = list(self._entries)

        async def step(index: int, current: C) -> None:
            if index == len(entries):
                if terminal is not None:
                    await terminal(current)
                return

            async def next_(override: C | None = None) -> None:
                await step(index + 1, current if override is None else override)

            await entries[index].handler(current, next_)

        await step(0, ctx)

    def _index(self, hook_id: str) -> int | None:
        for index, entry in enumerate(self._entries):
            if entry.id == hook_id:
                return index
        return None
