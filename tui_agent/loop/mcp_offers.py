"""What the loop's MCP servers offer a front end besides tools: their prompts (the app's
`/mcp__<server>__<prompt>` commands) and resources (`@server:uri` mentions). Also the step hook
that lets a server's `list_changed` refresh settle before the next request (`lists_settled`).

`McpOffers` is read at the moment it is needed (completion, sending), so it is always as the
servers last listed it (a `list_changed` refreshes the lists). `NO_OFFERS` stands for a loop
without servers, or one still opening.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop.hooks import Handler, Next, StepBeginContext
from tui_agent.vocab import ToolResult, error_result

if TYPE_CHECKING:
    from tui_agent.tools.mcp import McpServers


class McpOfferError(Exception):
    """A prompt could not be had from its server; the message says why."""


@dataclass(frozen=True)
class McpResourceInfo:
    server: str
    uri: str
    name: str
    description: str = ""


@dataclass(frozen=True)
class McpPromptArgumentInfo:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class McpPromptInfo:
    server: str
    name: str
    description: str = ""
    arguments: tuple[McpPromptArgumentInfo, ...] = ()


class McpOffers(Protocol):
    def resources(self) -> Sequence[McpResourceInfo]: ...

    def prompts(self) -> Sequence[McpPromptInfo]: ...

    async def prompt(self, server: str, name: str, arguments: dict[str, str]) -> str:
        """The prompt filled in, the text to send; raises `McpOfferError`."""
        ...

    async def read(self, server: str, uri: str) -> ToolResult:
        """The resource's contents (an error result when it cannot be read)."""
        ...


class _NoOffers:
    def resources(self) -> Sequence[McpResourceInfo]:
        return ()

    def prompts(self) -> Sequence[McpPromptInfo]:
        return ()

    async def prompt(self, server: str, name: str, arguments: dict[str, str]) -> str:
        raise McpOfferError(f'no MCP server "{server}" is running')

    async def read(self, server: str, uri: str) -> ToolResult:
        return error_result(f'no MCP server "{server}" is running')


NO_OFFERS: McpOffers = _NoOffers()


class ServerOffers:
    """The offers of a loop's `McpServers`."""

    def __init__(self, servers: McpServers) -> None:
        self._servers = servers

    def resources(self) -> Sequence[McpResourceInfo]:
        return [
            McpResourceInfo(server, item.uri, item.title or item.name, item.description)
            for server, item in self._servers.resources()
        ]

    def prompts(self) -> Sequence[McpPromptInfo]:
        return [
            McpPromptInfo(
                server,
                item.name,
                item.description or item.title or "",
                tuple(
                    McpPromptArgumentInfo(arg.name, arg.description, arg.required)
                    for arg in item.arguments
                ),
            )
            for server, item in self._servers.prompts()
        ]

    async def prompt(self, server: str, name: str, arguments: dict[str, str]) -> str:
        from tui_agent.tools.mcp import McpRequestError

        try:
            return await self._servers.get_prompt(server, name, arguments)
        except McpRequestError as error:
            raise McpOfferError(str(error)) from None

    async def read(self, server: str, uri: str) -> ToolResult:
        return await self._servers.read_resource(server, uri)


def lists_settled(servers: McpServers) -> Handler[StepBeginContext]:
    """The next request sees what a server's `list_changed` changed (its new tool table)."""

    async def hook(ctx: StepBeginContext, next_: Next[StepBeginContext]) -> None:
        await servers.settled()
        await next_(None)

    return hook
