"""`todo_write`: the model keeps a visible plan of its work.

Each call replaces the whole plan. The tool touches no files and never asks for approval; the
loop hands the new plan to observers (the plan view, `plan.updated` in headless jsonl) through
the `on_plan` callback it gives the tool.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from pydantic import Field, ValidationError

from tui_agent.tools._accesses import ToolAccesses
from tui_agent.tools._base import Tool, ToolArgs, ToolContext
from tui_agent.vocab import HistoryEntry, PlanItem, ToolFacts, ToolResult, error_result

MAX_PLAN_ITEMS = 50


class TodoWriteArgs(ToolArgs):
    todos: list[PlanItem] = Field(
        description="The whole plan, in order: every step with its status (pending, "
        "in_progress or completed). It replaces the previous plan."
    )


class TodoWrite(Tool[TodoWriteArgs]):
    name: ClassVar[str] = "todo_write"
    facts: ClassVar[ToolFacts] = ToolFacts(
        kind="think",
        verb="Update the plan",
        advice="todo_write: for a task of three or more steps, write a short plan first, "
        "keep exactly one step in_progress while you work, and mark each step completed as soon "
        "as it is done; skip it for quick, single-step requests.",
    )
    description: ClassVar[str] = (
        "Keep a short plan of the current task visible to the user. Use it for work of three or "
        "more distinct steps: write the plan before you start, mark one step in_progress while "
        "you work on it, and mark it completed as soon as it is done. Each call replaces the "
        "whole list. Skip it for small, single-step requests."
    )
    Args = TodoWriteArgs
    read_only: ClassVar[bool] = True  # it changes nothing the user must approve

    def __init__(self, on_plan: Callable[[tuple[PlanItem, ...]], None]) -> None:
        self._on_plan = on_plan

    def accesses(self, args: TodoWriteArgs) -> ToolAccesses:
        return ToolAccesses.none()

    def describe(self, args: TodoWriteArgs) -> str:
        return plan_summary(args.todos)

    async def execute(self, args: TodoWriteArgs, ctx: ToolContext) -> ToolResult:
        if len(args.todos) > MAX_PLAN_ITEMS:
            return error_result(
                f"A plan holds at most {MAX_PLAN_ITEMS} steps ({len(args.todos)} given): "
                "merge small steps."
            )
        if any(not item.content.strip() for item in args.todos):
            return error_result("Every step of the plan needs a non-empty content.")
        plan = tuple(args.todos)
        self._on_plan(plan)
        return ToolResult(
            output=f"Plan updated: {plan_summary(plan)}.",
            display={"plan": [item.model_dump() for item in plan]},
        )


def plan_summary(plan: Sequence[PlanItem]) -> str:
    """`3 steps: 1 completed, 1 in progress, 1 pending` (or `the plan is empty`)."""
    if not plan:
        return "the plan is empty"
    counts = {status: sum(1 for item in plan if item.status == status) for status in _ORDER}
    parts = [f"{n} {status.replace('_', ' ')}" for status, n in counts.items() if n]
    return f"{len(plan)} step{'s' if len(plan) != 1 else ''}: {', '.join(parts)}"


_ORDER = ("completed", "in_progress", "pending")


def plan_in(history: Sequence[HistoryEntry]) -> tuple[PlanItem, ...]:
    """The plan of the last `todo_write` call that succeeded, for a resumed session."""
    failed = {
        entry.message.tool_call_id
        for entry in history
        if entry.message.role == "tool" and entry.message.is_error
    }
    for entry in reversed(history):
        for call in reversed(entry.message.tool_calls):
            if call.name != TodoWrite.name or call.id in failed:
                continue
            try:
                return tuple(TodoWriteArgs.model_validate_json(call.arguments).todos)
            except ValidationError:
                continue
    return ()
