"""Builders for tool tests: configurable fake tools and a batch runner that records everything."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.tools import (
    Approvals,
    BatchExecutor,
    CallContext,
    Tool,
    ToolAccesses,
    ToolArgs,
    ToolContext,
    ToolRegistry,
    Workspace,
)
from tui_agent.vocab import AbortSignal, ToolCall, ToolResult, ToolUpdate


class FakeArgs(ToolArgs):
    text: str = ""
    path: str | None = None
    write: bool = False


Run = Callable[[FakeArgs, ToolContext], Awaitable[ToolResult]]


def make_tool(
    tool_name: str, run: Run, *, read_only: bool = True, edits_files: bool = False
) -> Tool[FakeArgs]:
    class Fake(Tool[FakeArgs]):
        name = tool_name
        description = f"fake {tool_name}"
        Args = FakeArgs

        def accesses(self, args: FakeArgs) -> ToolAccesses:
            if args.path is None:
                return ToolAccesses.none()
            if args.write:
                return ToolAccesses.write_file(args.path)
            return ToolAccesses.read_file(args.path)

        def describe(self, args: FakeArgs) -> str:
            return args.text or tool_name

        async def execute(self, args: FakeArgs, ctx: ToolContext) -> ToolResult:
            return await run(args, ctx)

    Fake.read_only = read_only
    Fake.edits_files = edits_files
    return Fake()


async def echo(args: FakeArgs, ctx: ToolContext) -> ToolResult:
    return ToolResult(output=args.text)


class Gates:
    """Tools that log start/end and finish only when the test opens their gate (named by text)."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self._gates: dict[str, asyncio.Event] = {}

    def gate(self, name: str) -> asyncio.Event:
        return self._gates.setdefault(name, asyncio.Event())

    async def run(self, args: FakeArgs, ctx: ToolContext) -> ToolResult:
        self.log.append(f"start {args.text}")
        await self.gate(args.text).wait()
        self.log.append(f"end {args.text}")
        return ToolResult(output=f"done {args.text}")

    def started(self) -> list[str]:
        return [entry.split(" ", 1)[1] for entry in self.log if entry.startswith("start")]


class _Inline(ThreadPoolExecutor):
    """Runs each job on the spot, in the event loop's thread (asyncio wants this base class)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:
            future.set_exception(error)
        return future


def inline_threads() -> None:
    """Make `asyncio.to_thread` run inline in the running loop, so a test that lets ready tasks
    run (`settle`) never races a worker thread (the executor resolves accesses in one)."""
    asyncio.get_running_loop().set_default_executor(_Inline())


def call(name: str, call_id: str | None = None, **arguments: Any) -> ToolCall:
    import json

    return ToolCall(id=call_id or f"call_{name}", name=name, arguments=json.dumps(arguments))


@dataclass
class Recorder:
    """What the executor told the caller about each call."""

    states: dict[str, list[str]] = field(default_factory=dict)
    updates: dict[str, list[ToolUpdate]] = field(default_factory=dict)
    detached: dict[str, str] = field(default_factory=dict)
    signals: dict[str, AbortSignal] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def _update(self, call_id: str, update: ToolUpdate) -> None:
        self.updates.setdefault(call_id, []).append(update)
        self.changed.set()

    async def first_update(self, call_id: str) -> str:
        while not self.updates.get(call_id):
            self.changed.clear()
            await self.changed.wait()
        return self.updates[call_id][0].text

    def context(self, call_id: str) -> CallContext:
        signal = self.signals.setdefault(call_id, AbortSignal())
        return CallContext(
            signal=signal,
            on_update=lambda u: self._update(call_id, u),
            detach=lambda ack: self.detached.__setitem__(call_id, ack),
            on_state=lambda s: self.states.setdefault(call_id, []).append(s),
        )


def executor(
    tmp_path: Path,
    *tools: Tool[Any],
    approvals: Approvals | None = None,
    grace: float = 2.0,
) -> BatchExecutor:
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    spill = tmp_path / "spill"
    return BatchExecutor(
        ToolRegistry(tools),
        Workspace(root, readable=[spill]),
        approvals or Approvals("yolo"),
        spill,
        abort_grace_s=grace,
    )


async def collect(
    ex: BatchExecutor,
    calls: list[ToolCall],
    recorder: Recorder | None = None,
    signal: AbortSignal | None = None,
) -> list[tuple[str, ToolResult]]:
    recorder = recorder or Recorder()
    batch = [(c, recorder.context(c.id)) for c in calls]
    return [item async for item in ex.execute(batch, signal or AbortSignal())]
