"""Event delivery and the approval queue: the loop's parts that tools and MCP servers call.

`Outbox` delivers loop events in order behind durability barriers, `Subscribers` fans them out
(a failing subscriber never hides an event from the others), `ApprovalQueue` turns approval
prompts into awaitable requests. The private `TurnPolicy` owns one of each; they are built
before the engine and the service, so the tools wired in between can already use them.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from typing import Literal

from tui_agent.context import ApprovalAnswered, Record
from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop import events as ev
from tui_agent.tools import ApprovalRequest, Decision


@dataclass(eq=False)
class _Held:
    event: ev.LoopEvent
    after: asyncio.Future[None] | None
    then: Callable[[], None] | None


class Outbox:
    """Delivers loop events in order. An event may wait for a future (a durability barrier of
    the event log); every later event waits behind it, so observers never see a turn's events
    out of order. `then` runs right after its event is delivered (prompt handles settle there,
    so a handle never resolves before observers saw its turn end)."""

    def __init__(
        self, deliver: Callable[[ev.LoopEvent], None], on_failed: Callable[[BaseException], None]
    ) -> None:
        self._deliver = deliver
        self._on_failed = on_failed
        self._held: collections.deque[_Held] = collections.deque()

    def send(
        self,
        event: ev.LoopEvent,
        after: asyncio.Future[None] | None = None,
        then: Callable[[], None] | None = None,
    ) -> None:
        held = _Held(event, after, then)
        if not self._held and (after is None or after.done()):
            self._release(held)
            return
        self._held.append(held)
        if after is not None:
            after.add_done_callback(lambda _done: self._pump())

    async def delivered(self) -> None:
        """Resolves once every event sent so far has been delivered."""
        while self._held:
            waits = [h.after for h in self._held if h.after is not None and not h.after.done()]
            if not waits:
                self._pump()
                continue
            await asyncio.wait(waits)

    def _pump(self) -> None:
        while self._held and (self._held[0].after is None or self._held[0].after.done()):
            self._release(self._held.popleft())

    def _release(self, held: _Held) -> None:
        after = held.after
        error = after.exception() if after is not None and not after.cancelled() else None
        if error is not None:
            self._on_failed(error)
        self._deliver(held.event)
        if held.then is not None:
            held.then()


class Subscribers:
    """The event fan-out. Each subscriber is called on its own: one that raises is reported to
    `on_failure` (once per subscriber and error, not once per event) and every other subscriber
    still gets the event, so a widget bug can neither hide events from the event log nor stop a
    turn."""

    def __init__(self, on_failure: Callable[[str, BaseException], None]) -> None:
        self._callbacks: list[Callable[[ev.LoopEvent], None]] = []
        self._on_failure = on_failure
        self._reported: set[tuple[int, str]] = set()

    def add(self, callback: Callable[[ev.LoopEvent], None]) -> Callable[[], None]:
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    def publish(self, event: ev.LoopEvent) -> None:
        failed: list[BaseException] = []
        for callback in list(self._callbacks):
            try:
                callback(event)
            except Exception as error:
                key = (id(callback), repr(error))
                if key not in self._reported:
                    self._reported.add(key)
                    failed.append(error)
        # Reported once everyone has the event, so the notice follows it for every subscriber.
        for failure in failed:
            self._on_failure(f"an event subscriber failed on {event.type}", failure)


@dataclass(eq=False)
class _PendingApproval:
    request_id: str
    call_id: str
    future: asyncio.Future[Decision]
    stop: Literal["cancel", "stop_call"] | None = None  # the loop denied it: nobody answered


class ApprovalQueue:
    """Approvals as awaitable requests: `ask` publishes `approval.requested` and waits for
    `answer` (or a denial when the turn is cancelled or the call stopped). Every front end's
    answer passes here, so here each is logged (`approval.answered`): a rerun answers from it."""

    def __init__(
        self, publish: Callable[[ev.LoopEvent], None], record: Callable[[Record], None]
    ) -> None:
        self._publish = publish
        self._record = record
        self._pending: dict[str, _PendingApproval] = {}

    async def ask(self, request: ApprovalRequest) -> Decision:
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        request_id, call_id = request.request_id, request.call_id
        pending = self._pending[request_id] = _PendingApproval(request_id, call_id, future)
        self._publish(
            ev.ApprovalRequested(
                request_id=request_id,
                call_id=call_id,
                name=request.tool_name,
                summary=request.description,
                rule=request.rule,
                preview=request.preview,
                kind=request.kind,
                rules=request.rules,
                sandboxed=request.sandboxed,
                why=request.why,
                change=request.change,
            )
        )
        try:
            decision = await future
        finally:
            self._pending.pop(request_id, None)
        self._record(_answered(request, decision, pending.stop))
        self._publish(
            ev.ApprovalResolved(request_id=request_id, call_id=call_id, decision=decision.kind)
        )
        return decision

    def answer(self, request_id: str, decision: Decision) -> None:
        pending = self._pending.get(request_id)
        if pending is not None and not pending.future.done():
            pending.future.set_result(decision)

    def deny(self, reason: str, *, call_id: str | None = None) -> None:
        """Deny every pending request, or only those of `call_id`."""
        for pending in list(self._pending.values()):
            if (call_id is None or pending.call_id == call_id) and not pending.future.done():
                pending.stop = "cancel" if call_id is None else "stop_call"
                pending.future.set_result(Decision.deny(reason))


def _answered(
    request: ApprovalRequest, decision: Decision, stop: Literal["cancel", "stop_call"] | None
) -> ApprovalAnswered:
    """The record of an answer: what the bar showed in one line, never its preview (a diff
    or a plan is in the call's arguments already)."""
    return ApprovalAnswered(
        call_id=request.call_id,
        kind=request.kind,
        name=request.tool_name,
        summary=request.description,
        rule=request.rule,
        rules=request.rules,
        why=request.why,
        decision=decision.kind,
        keep=decision.keep,
        mode=decision.mode,
        reason=decision.reason,
        stop=stop,
    )
