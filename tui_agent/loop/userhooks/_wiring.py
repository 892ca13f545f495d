"""The user's hooks fastened to one loop: its slots, its executor, its start and its end.

`ToolHookGate` is the executor's `CallHooks`: `PreToolUse` may refuse a call (exit 2: its
stderr is the result the model reads; a "deny": its reason), or answer "allow" / "ask", which
the approvals weigh (never past a deny rule or the sandbox); `PostToolUse` may add a note the
model reads with the result (exit 2's stderr, a "block" reason, `additionalContext`).
`attach` registers the rest on the service: `SessionStart` at once (in the background: the
first prompt waits for it, since its output is context for that prompt), `UserPromptSubmit` in
the prompt gate (a block drops the prompt; context joins it), `Stop` or, in a sub-agent,
`SubagentStop` in `on_turn_stop` (a block keeps the turn going with the reason), `PreCompact`
in `on_before_compact`, `Notification` when an approval waits, and `SessionEnd` as the loop
closes. `continue: false` ends the turn wherever a hook says it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from tui_agent.loop import events as ev
from tui_agent.loop.hooks import (
    CompactContext,
    Handler,
    Next,
    OrderedHookSlot,
    PromptContext,
    StopContext,
)
from tui_agent.loop.userhooks import _claude
from tui_agent.loop.userhooks._runtime import LoopHooks
from tui_agent.loop.userhooks._spec import HookEvent
from tui_agent.tools import HookDecision
from tui_agent.vocab import Message, TextPart, ToolResult, error_result


class Slots(Protocol):
    """What `attach` needs of the service (its hook slots and its event stream)."""

    on_before_submit_prompt: OrderedHookSlot[PromptContext]
    on_turn_stop: OrderedHookSlot[StopContext]
    on_before_compact: OrderedHookSlot[CompactContext]

    def subscribe(self, callback: Callable[[ev.LoopEvent], None]) -> Callable[[], None]: ...


class ToolHookGate:
    """`PreToolUse` and `PostToolUse` around each call (see the module docstring)."""

    def __init__(self, hooks: LoopHooks) -> None:
        self._hooks = hooks

    async def before(
        self, name: str, args: dict[str, Any], call_id: str
    ) -> HookDecision | ToolResult | None:
        if not self._hooks.has("PreToolUse"):
            return None
        claude = _claude.tool_name(name)
        fields = {
            "tool_name": claude,
            "tool_input": _claude.tool_input(name, args, self._hooks.workspace),
            "tool_use_id": call_id,
        }
        verdict = await self._hooks.fire("PreToolUse", fields, (claude, name))
        if verdict.stop:
            refused = error_result(f"A hook stopped the turn: {verdict.stop_reason}")
            return refused.model_copy(update={"stop_turn": True})
        if verdict.block:
            return error_result(verdict.reason)
        if verdict.permission == "deny":
            return error_result(verdict.permission_reason or f'A hook denied "{claude}".')
        if verdict.permission is not None:
            return HookDecision(verdict.permission, verdict.permission_reason)
        return None

    async def after(
        self, name: str, args: dict[str, Any], call_id: str, result: ToolResult
    ) -> ToolResult:
        if not self._hooks.has("PostToolUse"):
            return result
        claude = _claude.tool_name(name)
        workspace = self._hooks.workspace
        fields = {
            "tool_name": claude,
            "tool_input": _claude.tool_input(name, args, workspace),
            "tool_response": _claude.tool_response(name, args, result, workspace),
            "tool_use_id": call_id,
        }
        verdict = await self._hooks.fire("PostToolUse", fields, (claude, name))
        notes = [result.note] if result.note else []
        if verdict.block:
            notes.append(f"A PostToolUse hook says: {verdict.reason}")
        notes += verdict.context
        update: dict[str, Any] = {}
        if len(notes) > (1 if result.note else 0):
            update["note"] = "\n".join(notes)
        if verdict.stop:
            update.update(stop_turn=True, stop_turn_reason=verdict.stop_reason or None)
        return result.model_copy(update=update) if update else result


def _stop_handler(hooks: LoopHooks, event: HookEvent) -> Handler[StopContext]:
    async def handler(ctx: StopContext, next_: Next[StopContext]) -> None:
        fields = {"stop_hook_active": ctx.continued, "last_assistant_message": ctx.last_text}
        verdict = await hooks.fire(event, fields)
        if verdict.block and not verdict.stop:
            ctx.continue_with = verdict.reason
        await next_(None)

    return handler


def _compact_handler(hooks: LoopHooks) -> Handler[CompactContext]:
    async def handler(ctx: CompactContext, next_: Next[CompactContext]) -> None:
        fields = {"trigger": ctx.trigger, "custom_instructions": ""}
        verdict = await hooks.fire("PreCompact", fields, (ctx.trigger,))
        if verdict.block:
            ctx.block, ctx.reason = True, verdict.reason
        await next_(None)

    return handler


class _Session:
    """A top-level loop's session events: start, prompts, notifications, end."""

    def __init__(self, hooks: LoopHooks, source: str) -> None:
        self._hooks = hooks
        self._tasks: set[asyncio.Task[Any]] = set()
        self._context: list[str] = []  # SessionStart's, for the first prompt
        self._started = self._spawn(self._session_start(source))

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _session_start(self, source: str) -> None:
        verdict = await self._hooks.fire("SessionStart", {"source": source}, (source,))
        self._context += verdict.context

    async def on_prompt(self, ctx: PromptContext, next_: Next[PromptContext]) -> None:
        with contextlib.suppress(Exception):  # a failed start-up hook said so itself
            await asyncio.shield(self._started)
        verdict = await self._hooks.fire("UserPromptSubmit", {"prompt": ctx.message.text})
        if verdict.block or verdict.stop:
            ctx.block = True
            why = verdict.stop_reason if verdict.stop and not verdict.block else verdict.reason
            self._hooks.notice("warning", f"The prompt was not sent: {why}")
            return
        context, self._context = [*self._context, *verdict.context], []
        if context:
            added = "".join(f"\n\n<hook-context>\n{text}\n</hook-context>" for text in context)
            content = (*ctx.message.content, TextPart(text=added))
            ctx.message = Message(role=ctx.message.role, content=content)
        await next_(None)

    def on_event(self, event: ev.LoopEvent) -> None:
        if isinstance(event, ev.ApprovalRequested):
            text = f"tui-agent needs your permission to use {event.name}"
            fields = {"message": text, "notification_type": "permission_prompt"}
            self._spawn(self._hooks.fire("Notification", fields, ("permission_prompt",)))

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._hooks.fire("SessionEnd", {"reason": "other"}, ("other",))


def attach(service: Slots, hooks: LoopHooks, *, subagent: bool, resumed: bool) -> None:
    """Register the hooks on `service` (nothing when none is configured); a top-level loop's
    `SessionEnd` runs from `hooks.close`; a sub-agent's loop has no session events of its own."""
    if not hooks.hooks.specs:
        return
    stop: HookEvent = "SubagentStop" if subagent else "Stop"
    if hooks.has(stop):  # otherwise a turn's end is not held up at all
        service.on_turn_stop.register("user-hooks", _stop_handler(hooks, stop))
    if hooks.has("PreCompact"):
        service.on_before_compact.register("user-hooks", _compact_handler(hooks))
    if subagent:
        return
    session = _Session(hooks, "resume" if resumed else "startup")
    service.on_before_submit_prompt.register("user-hooks", session.on_prompt)
    unsubscribe = service.subscribe(session.on_event)

    async def close() -> None:
        unsubscribe()
        await session.close()

    hooks.on_close = close
