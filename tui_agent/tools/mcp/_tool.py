"""A server's tool as one of ours: `mcp__<server>__<tool>` with the server's own schema.

Arguments are passed through as the model wrote them (the server validates them and answers
with an error the model can read). Calls to a tool the server marks read-only run in parallel
with anything; other calls to one server take the server as a whole, so the scheduler runs
them one at a time. Every call asks for approval unless a rule allows it (`mcp__git__*`).
The server's progress reports become updates of the call (one line each: the tools pane shows
the latest on the call's row).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from tui_agent.tools._accesses import ToolAccesses
from tui_agent.tools._base import Tool, ToolAborted, ToolContext
from tui_agent.tools.mcp._connection import Progress, ServerTool
from tui_agent.tools.mcp._names import tool_name
from tui_agent.vocab import ToolResult, ToolSpec, ToolUpdate

DESCRIBE_ARGS = 120  # characters of the arguments shown on one line

CallServer = Callable[[str, dict[str, Any], Progress], Awaitable[ToolResult]]


class McpArgs(BaseModel):
    """Whatever object the model sent; the server checks it against its schema."""

    model_config = ConfigDict(extra="allow")


class McpTool(Tool[McpArgs]):
    Args = McpArgs

    def __init__(self, server: str, tool: ServerTool, call: CallServer) -> None:
        # Built-in tools name themselves per class; a server's tools are known only at run time.
        self.name = tool_name(server, tool.name)  # type: ignore[misc]
        self.description = tool.description or tool.title or tool.name  # type: ignore[misc]
        self.server = server
        self.remote_name = tool.name
        self.read_only_hint = tool.read_only
        self._schema = _object_schema(tool.input_schema)
        self._call = call

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self._schema)

    def accesses(self, args: McpArgs) -> ToolAccesses:
        if self.read_only_hint:
            return ToolAccesses.none()
        return ToolAccesses.write_file(f"mcp://{self.server}")

    def plan_safe(self, args: McpArgs) -> bool:
        return self.read_only_hint  # the server says the tool changes nothing

    def describe(self, args: McpArgs) -> str:
        text = json.dumps(args.model_dump(), ensure_ascii=False)
        if len(text) > DESCRIBE_ARGS:
            text = text[: DESCRIBE_ARGS - 1] + "…"
        return f"{self.server}: {self.remote_name} {text}"

    async def preview(self, args: McpArgs) -> str:
        body = json.dumps(args.model_dump(), ensure_ascii=False, indent=2)
        return f"MCP server {self.server!r}, tool {self.remote_name!r}\n{body}"

    async def execute(self, args: McpArgs, ctx: ToolContext) -> ToolResult:
        async def report(progress: float, total: float | None, message: str | None) -> None:
            ctx.on_update(ToolUpdate(text=progress_line(progress, total, message) + "\n"))

        call = asyncio.ensure_future(self._call(self.remote_name, args.model_dump(), report))
        aborted = asyncio.ensure_future(ctx.signal.wait())
        try:
            await asyncio.wait({call, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
        if call.done():
            return call.result()
        # Cancelling the call sends `notifications/cancelled` to the server.
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        raise ToolAborted()


def progress_line(done: float, total: float | None, message: str | None) -> str:
    """`3/10 (30%) message`, or `3 message` when the server gives no total."""
    amount = f"{done:g}/{total:g} ({done / total:.0%})" if total else f"{done:g}"
    return f"{amount} {message}" if message else amount


def _object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The server's schema, minus its title; providers require an object at the top."""
    cleaned = {key: value for key, value in schema.items() if key != "title"}
    cleaned.setdefault("type", "object")
    if cleaned["type"] == "object":
        cleaned.setdefault("properties", {})
    return cleaned
