"""Sub-agents: the `task` tool runs a job in a child loop and returns its final answer.

A child is a whole loop of its own (agent, turn and tool machines) built by the same factory:
a fresh history (its own system prompt plus the job's prompt, never the parent's
conversation), the parent's provider and model, the parent's approvals (mode and rules are
shared, and its questions reach the same user, asked about the `task` call), the parent's own
tool instances and scheduler (its calls never run at the same time as a conflicting call of
the parent or of another child), a step limit, and its own event log beside the parent's
(`tasks/<call id>.jsonl`). A child below the depth limit gets no `task` tool itself.

The parent sees a child through `Subagents`: live state and current tool for the tools pane
(relayed as tool updates), the child's loop while it runs (its transcript and machines), its
history once it is done, and its usage, which is added to the parent's.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from tui_agent.context import read_log
from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop import events as ev
from tui_agent.loop.api import LoopApi, SubagentRun
from tui_agent.loop.replay import replay
from tui_agent.tools import Tool, ToolAborted, ToolAccesses, ToolArgs, ToolContext, ToolScheduler
from tui_agent.vocab import ToolFacts, ToolResult, ToolUpdate, error_result

_PLAIN_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
_UNPLAIN = re.compile(r"[^A-Za-z0-9_-]")

SUBAGENT_PROMPT = """\
# You are a sub-agent
Another agent delegated one job to you. You cannot talk to the user and you do not see the \
other agent's conversation: everything you know about the job is in the message below. Work \
on it with your tools until it is done, then answer with a complete, self-contained report: \
what you found or changed (with paths), and anything left open. That final message is all the \
other agent will see."""


@dataclass(frozen=True)
class SubagentOptions:
    """How deep `task` may nest (1: the main agent delegates, its children cannot) and how many
    steps a child's turn may take."""

    max_depth: int = 1
    max_steps: int = 50


@dataclass(frozen=True)
class Parent:
    """What a sub-agent's loop takes from its parent's, besides the approvals, MCP servers and
    checkpoints: the same objects, never new ones built from defaults. The parent's tool
    instances (so the child's are configured like the parent's: editor buffers, the shell's
    settings), its scheduler (so the child's calls are conflict-checked against the parent's
    and every other sub-agent's, and two of them never edit one file at once), and the id of
    the top-level `task` call, under which the person is asked about the child's calls."""

    tools: tuple[Tool[Any], ...]
    scheduler: ToolScheduler
    task_call_id: str


class TaskArgs(ToolArgs):
    description: str = Field(description="A short title for the job (3-7 words).")
    prompt: str = Field(
        description="The whole job for the sub-agent: what to do, the context it needs (it "
        "sees nothing of this conversation) and what to report back."
    )
    tools: list[str] | None = Field(
        default=None,
        description="Optional subset of tool names the sub-agent may use (default: all of "
        "yours except task).",
    )


SpawnChild = Callable[[str, Sequence[str] | None, Path], Awaitable[LoopApi]]


class Subagents:
    """The children of one loop, in the order they started."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder  # where the children's event logs go
        self._runs: dict[str, SubagentRun] = {}

    def log_path(self, call_id: str) -> Path:
        """`<id>.jsonl` for a plain id (what providers send); any other id gets its other
        characters replaced and a digest of the whole id after a dot, which no plain id has,
        so two ids never share a log (`a.b` and `a_b` once did)."""
        if _PLAIN_ID.fullmatch(call_id):
            return self.folder / f"{call_id}.jsonl"
        digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return self.folder / f"{_UNPLAIN.sub('_', call_id)[:64]}.{digest}.jsonl"

    def start(self, call_id: str, description: str) -> SubagentRun:
        run = SubagentRun(call_id, description, self.log_path(call_id))
        self._runs[call_id] = run
        return run

    def get(self, call_id: str) -> SubagentRun | None:
        """A run of this session, or one of a resumed session read back from its log."""
        run = self._runs.get(call_id)
        path = self.log_path(call_id)
        if not path.is_file():  # a session written before ids were kept apart
            legacy = "".join(c if c.isalnum() or c in "-_" else "_" for c in call_id)
            path = self.folder / f"{legacy}.jsonl"
        if run is None and path.is_file():
            shown = replay(read_log(path), context_window=0).events
            run = SubagentRun(call_id, "", path, "completed", transcript=shown)
            self._runs[call_id] = run
        return run

    def live(self) -> list[SubagentRun]:
        return [run for run in self._runs.values() if run.loop is not None]


class Task(Tool[TaskArgs]):
    name: ClassVar[str] = "task"
    facts: ClassVar[ToolFacts] = ToolFacts(
        kind="think",
        verb="Sub-agent:",
        primary_arg="description",
        advice="task: delegate a self-contained job (a broad search, an investigation, an "
        "independent change) to a sub-agent with a fresh context; give it everything it needs in "
        "the prompt, and run independent jobs in parallel with several task calls in one step.",
    )
    description: ClassVar[str] = (
        "Delegate a self-contained job to a sub-agent with a fresh context: it has your tools "
        "(except task), works on its own and returns one final report. Use it for broad "
        "searches or investigations whose details you do not need in your own context, or for "
        "independent jobs that can run in parallel (several task calls in one step run at "
        "once). Give it everything it needs in the prompt: it does not see this conversation."
    )
    Args = TaskArgs
    read_only: ClassVar[bool] = True  # the child's own calls ask for approval, not this one

    def __init__(
        self,
        runs: Subagents,
        spawn: SpawnChild,
        on_usage: Callable[[SubagentRun], None],
        publish: Callable[[ev.LoopEvent], None],
        tool_names: Sequence[str],
    ) -> None:
        self._runs = runs
        self._spawn = spawn
        self._on_usage = on_usage
        self._publish = publish
        self._tool_names = tuple(name for name in tool_names if name != self.name)

    def accesses(self, args: TaskArgs) -> ToolAccesses:
        return ToolAccesses.delegated()  # the child's calls go through the same scheduler

    def describe(self, args: TaskArgs) -> str:
        return args.description

    async def execute(self, args: TaskArgs, ctx: ToolContext) -> ToolResult:
        unknown = sorted(set(args.tools or ()) - set(self._tool_names))
        if unknown:
            return error_result(
                f"Unknown tool(s) for a sub-agent: {', '.join(unknown)}. "
                f"Available: {', '.join(self._tool_names)}."
            )
        run = self._runs.start(ctx.call_id, args.description)
        run.log_path.parent.mkdir(parents=True, exist_ok=True)
        child = await self._spawn(ctx.call_id, args.tools, run.log_path)
        run.loop, run.state = child, "running"
        relay = _Relay(run, ctx, self._publish)
        unsubscribe = child.subscribe(relay)
        try:
            return await self._run(child, run, relay, args, ctx)
        finally:
            unsubscribe()
            run.transcript = tuple(run.events)
            run.loop = None
            run.events = []  # the transcript holds it all now
            await child.close()
            self._on_usage(run)

    async def _run(
        self, child: LoopApi, run: SubagentRun, relay: _Relay, args: TaskArgs, ctx: ToolContext
    ) -> ToolResult:
        handle = await child.submit(args.prompt)
        finished = asyncio.ensure_future(handle.result())
        aborted = asyncio.ensure_future(ctx.signal.wait())
        try:
            await asyncio.wait({finished, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
        if not finished.done():
            await child.cancel()  # the child pairs every open call of its own
            with contextlib.suppress(Exception):
                await finished
            run.state = "cancelled"
            raise ToolAborted(partial=relay.answer)
        result = finished.result()
        display = {"subagent": {"log": run.log_path.name, "steps": result.steps}}
        if result.type == "completed":
            run.state = "completed"
            return ToolResult(
                output=relay.answer or "(the sub-agent gave no answer)", display=display
            )
        run.state = "failed" if result.type == "failed" else "cancelled"
        why = (result.error or {}).get("message") or result.reason or result.type
        partial = f"\nIts last words:\n{relay.answer}" if relay.answer else ""
        return ToolResult(
            output=f"The sub-agent did not finish ({result.type}: {why}).{partial}",
            is_error=True,
            display=display,
        )


class _Relay:
    """Follows a child's events: its answer, usage and current tool (shown on the task's row);
    its machines' transitions go to the parent's observers under the task's name."""

    def __init__(
        self, run: SubagentRun, ctx: ToolContext, publish: Callable[[ev.LoopEvent], None]
    ) -> None:
        self._run = run
        self._ctx = ctx
        self._publish = publish
        self.answer = ""
        self._names: dict[str, str] = {}

    def __call__(self, event: ev.LoopEvent) -> None:
        if not isinstance(event, ev.MachineTransition):
            self._run.record(event)
        match event:
            case ev.ToolStarted():
                self._names[event.id] = event.name
                self._run.current_tool = event.name
                self._ctx.on_update(ToolUpdate(text=f"→ {event.name} {_short(event.arguments)}\n"))
            case ev.ToolFinished():
                if self._run.current_tool == self._names.get(event.id):
                    self._run.current_tool = None
            case ev.UsageChanged():
                self._run.usage = event.total
                self._run.cost_usd = event.cost_usd
            case ev.TurnFinished():
                self.answer = event.text
            case ev.MachineTransition():
                machine_id = f"{machine_prefix(self._run)}{event.machine_id}"
                self._publish(event.model_copy(update={"machine_id": machine_id}))
            case _:
                pass


def machine_prefix(run: SubagentRun) -> str:
    """How a child's machines are named among the parent's (the inspector lists them)."""
    return f"task {run.call_id} · "


def _short(arguments: str, limit: int = 40) -> str:
    flat = " ".join(arguments.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
