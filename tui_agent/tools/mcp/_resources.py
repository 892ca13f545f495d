"""`read_mcp_resource`: the model reads a resource an MCP server offers or links to.

Offered while at least one live server declares resources. A tool result's resource link
names this call (see `_convert.resource_link`), and the servers' listed resources are named
in the tool's description, so a link is never a dead end. Reading changes nothing on the
server, so the call is read-only and never asks; what the resource holds comes back as text,
or as an image the model sees.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import ClassVar

from pydantic import Field

from tui_agent.tools._accesses import ToolAccesses
from tui_agent.tools._base import Tool, ToolArgs, ToolContext
from tui_agent.tools.mcp._listing import ServerResource
from tui_agent.vocab import ToolFacts, ToolResult

NAME = "read_mcp_resource"
LISTED = 40  # resources named in the description; a server may list thousands

ReadResource = Callable[[str, str], Awaitable[ToolResult]]


class ReadMcpResourceArgs(ToolArgs):
    server: str = Field(description="The MCP server's name, as in mcp__<server>__<tool>.")
    uri: str = Field(description="The resource's URI, as the server listed or linked it.")


class ReadMcpResource(Tool[ReadMcpResourceArgs]):
    name: ClassVar[str] = NAME
    facts: ClassVar[ToolFacts] = ToolFacts(kind="read", verb="Read", primary_arg="uri")
    Args = ReadMcpResourceArgs
    read_only: ClassVar[bool] = True  # a read changes nothing on the server

    def __init__(self, read: ReadResource, listed: Sequence[tuple[str, ServerResource]]) -> None:
        self._read = read
        lines = [f"- {server}: {item.uri} ({item.title or item.name})" for server, item in listed]
        more = len(lines) - LISTED
        known = "\n".join(lines[:LISTED]) + (f"\n(and {more} more)" if more > 0 else "")
        # Built per instance: the servers' resources are known only at run time.
        self.description = (  # type: ignore[misc]
            "Read a resource from an MCP server: a resource link in a tool result, or one of "
            "the resources the servers list." + (f" Listed now:\n{known}" if known else "")
        )

    def accesses(self, args: ReadMcpResourceArgs) -> ToolAccesses:
        return ToolAccesses.none()

    def describe(self, args: ReadMcpResourceArgs) -> str:
        return f"{args.server}: {args.uri}"

    async def execute(self, args: ReadMcpResourceArgs, ctx: ToolContext) -> ToolResult:
        return await self._read(args.server, args.uri)
