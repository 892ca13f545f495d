"""`exit_plan_mode`: in plan mode the model ends its research by presenting a plan.

The plan (Markdown) goes to the person through `present` (the approvals' `present_plan`, which
the loop wraps to publish it first): they accept it and pick the mode to continue in, or keep
the model planning with feedback. The result tells the model which. Outside plan mode the tool
does nothing and says so. It touches no files, so it runs in every mode without a question of
its own (its question is the plan).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ClassVar

from pydantic import Field

from tui_agent.tools._accesses import ToolAccesses
from tui_agent.tools._base import Tool, ToolArgs, ToolContext
from tui_agent.vocab import ToolFacts, ToolResult, error_result

Present = Callable[[str, str], Awaitable[str]]  # (plan, call id) -> what the model reads

PLAN_MODE_PROMPT = (
    "You are in plan mode: the user wants a plan before anything changes. Read and search as "
    "you need (read_file, glob, grep, read-only tools, todo_write), but do not edit files or "
    "run commands: they are refused. When you know what to do, call exit_plan_mode with your "
    "plan in Markdown; the user accepts it or asks you to keep planning."
)


class ExitPlanModeArgs(ToolArgs):
    plan: str = Field(
        description="The plan, in Markdown: what you will change, file by file, and how you "
        "will check it. Be concise."
    )


class ExitPlanMode(Tool[ExitPlanModeArgs]):
    name: ClassVar[str] = "exit_plan_mode"
    facts: ClassVar[ToolFacts] = ToolFacts(kind="switch_mode")
    description: ClassVar[str] = (
        "In plan mode, once you have read enough to know what to do, present your plan to the "
        "user with this tool. They accept it (and you may then edit and run commands) or ask "
        "you to keep planning. Use it only in plan mode, and only for work that changes files."
    )
    Args = ExitPlanModeArgs
    read_only: ClassVar[bool] = True  # it changes nothing; the person answers the plan itself

    def __init__(self, present: Present) -> None:
        self._present = present

    def accesses(self, args: ExitPlanModeArgs) -> ToolAccesses:
        return ToolAccesses.none()

    def describe(self, args: ExitPlanModeArgs) -> str:
        first = next(
            (line.strip("# ").strip() for line in args.plan.splitlines() if line.strip()), ""
        )
        return first[:120] or "(empty plan)"

    async def execute(self, args: ExitPlanModeArgs, ctx: ToolContext) -> ToolResult:
        if not args.plan.strip():
            return error_result("The plan is empty: write it in Markdown in `plan`.")
        return ToolResult(output=await self._present(args.plan, ctx.call_id))
