"""A cancellation token with a reason, linkable to a parent.

Every layer speaks it (kernel, tools, loop), so it lives with the vocabulary: it is the one
piece of behaviour here, kept to an `asyncio.Event` and a reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class AbortSignal:
    def __init__(self, parent: AbortSignal | None = None) -> None:
        self._event = asyncio.Event()
        self._reason: str | None = None
        self._callbacks: list[Callable[[str], None]] = []
        if parent is not None:
            if parent.aborted:
                self.abort(parent.reason or "aborted")
            else:
                parent.add_callback(self.abort)

    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> str | None:
        return self._reason

    def abort(self, reason: str = "aborted") -> None:
        if self._event.is_set():
            return
        self._reason = reason
        self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(reason)

    def add_callback(self, callback: Callable[[str], None]) -> None:
        if self.aborted:
            callback(self._reason or "aborted")
        else:
            self._callbacks.append(callback)

    async def wait(self) -> str:
        await self._event.wait()
        return self._reason or "aborted"
