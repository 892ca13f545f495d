"""One live MCP session with one server, and the words for how it went wrong.

The SDK's transports and `ClientSession` are anyio contexts that must be entered and left by
the same task, so each connection has an owner task that opens them, reports the server's
tools, then holds the session open until `close()`. Calls come from other tasks. A stdio
server's stderr goes to a temporary file whose tail explains a failure. The SDK is imported
here only, when a connection opens, so nothing pays for it when no server is configured.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from typing import IO, TYPE_CHECKING, Any, Protocol, TypeVar, cast

from tui_agent.lazy_dataclass import dataclass
from tui_agent.tools._groups import child_group, end_group, track
from tui_agent.tools.elicitation import Elicit
from tui_agent.tools.mcp._auth import Authorizer
from tui_agent.tools.mcp._config import McpServerConfig
from tui_agent.tools.mcp._elicit import session_callback
from tui_agent.tools.mcp._notifications import ListKind, list_changed_handler
from tui_agent.version import package_version

if TYPE_CHECKING:
    from mcp.client.session import ClientSession
    from mcp.types import CallToolResult

T = TypeVar("T")


class Progress(Protocol):
    """Hears a call's progress reports: done so far, the total when known, the message."""

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None: ...


STDERR_TAIL = 2_000  # characters of a server's stderr quoted in an error
CLOSE_TIMEOUT_S = 10.0
_MARKER = "TUI_AGENT_MCP_SERVER"  # in a stdio server's environment: how we find its pid


class McpStartError(Exception):
    """The server did not come up; the message says why (with its stderr tail)."""


class McpConnectionLost(Exception):
    """The server went away during a call."""


class McpCallError(Exception):
    """The server answered a call with a protocol error (unknown tool, bad arguments, timeout)."""


@dataclass(frozen=True)
class ServerTool:
    """A tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    title: str | None = None


class McpConnection:
    def __init__(
        self,
        config: McpServerConfig,
        on_list_changed: Callable[[ListKind], None] = lambda kind: None,
        authorizer: Authorizer | None = None,
        elicit: Elicit | None = None,
    ) -> None:
        self.config = config
        self._on_list_changed = on_list_changed
        self._authorizer = authorizer
        self._elicit = elicit
        self._session: ClientSession | None = None
        self._owner: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self._stderr: IO[bytes] | None = None

    @property
    def alive(self) -> bool:
        return self._session is not None and self._owner is not None and not self._owner.done()

    @property
    def offers_resources(self) -> bool:
        session = self._session
        capabilities = session.server_capabilities if session is not None else None
        return capabilities is not None and capabilities.resources is not None

    @property
    def instructions(self) -> str:
        """What the server asks the model to know about using it (empty when it says nothing)."""
        return (self._session.instructions if self._session is not None else None) or ""

    async def open(self) -> list[ServerTool]:
        """Start the server and list its tools, within the configured start-up time."""
        ready: asyncio.Future[list[ServerTool]] = asyncio.get_running_loop().create_future()
        # Marked as seen: when start-up is abandoned nobody awaits the reason it failed.
        ready.add_done_callback(lambda f: None if f.cancelled() else f.exception())
        if self.config.transport == "stdio":
            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the server
        self._owner = asyncio.create_task(self._own(ready), name=f"mcp:{self.config.name}")
        try:
            async with asyncio.timeout(self.config.startup_timeout_s):
                return await asyncio.shield(ready)
        except TimeoutError:
            await self.close()
            raise McpStartError(
                self._with_tail(f"did not start within {self.config.startup_timeout_s:g} s")
            ) from None
        except McpStartError:
            await self.close()
            raise

    async def _own(self, ready: asyncio.Future[list[ServerTool]]) -> None:
        # The SDK starts a stdio server as a process group of its own and ends it on close; the
        # reaper is told the group (found by a marker in its environment), so it ends the server
        # should this process die first (kill -9 included): one that ignores the end of its
        # input would otherwise stay.
        marker = f"{_MARKER}={uuid.uuid4().hex}"
        group: int | None = None
        try:
            from mcp.client.session import ClientSession
            from mcp.types import Implementation

            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(marker))
                if self.config.transport == "stdio":
                    group = child_group(marker)
                    if group is not None:
                        track(group)
                answers = session_callback(self.config.name, self._elicit) if self._elicit else None
                session = await stack.enter_async_context(
                    ClientSession(
                        read,
                        write,
                        message_handler=list_changed_handler(self._on_list_changed),
                        client_info=Implementation(name="tui-agent", version=package_version()),
                        elicitation_callback=answers,
                    )
                )
                await session.initialize()
                tools = await list_tools(session)
                self._session = session
                ready.set_result(tools)
                await self._closing.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.set_exception(McpStartError(self._with_tail("start-up was cancelled")))
            raise
        except BaseException as error:  # the SDK raises exception groups from its task groups
            if not ready.done():
                failure = McpStartError(self._with_tail(_describe(error)))
                failure.__cause__ = error  # the caller looks in it for a needed login
                ready.set_exception(failure)
        finally:
            self._session = None
            if group is not None:
                end_group(group)  # the SDK has ended it, unless a cancel cut its stop short

    def _transport(self, marker: str) -> contextlib.AbstractAsyncContextManager[Any]:
        """The SDK's transport; a stdio server gets `marker` in its environment (see `_own`)."""
        config = self.config
        if config.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            auth = self._authorizer.provider() if self._authorizer else None
            client = create_mcp_http_client(headers=dict(config.headers) or None, auth=auth)
            return streamable_http_client(config.url, http_client=client)
        if config.transport == "sse":
            from mcp.client.sse import sse_client

            # The legacy transport (an event stream plus a POST endpoint it names), which many
            # hosted servers still speak.
            legacy: contextlib.AbstractAsyncContextManager[Any] = sse_client(
                config.url, headers=dict(config.headers) or None
            )
            return legacy
        from mcp.client.stdio import StdioServerParameters, stdio_client

        name, value = marker.split("=", 1)
        params = StdioServerParameters(
            command=config.command,
            args=list(config.args),
            env={**config.env, name: value},
            cwd=config.cwd,
        )
        # The SDK wants a text file for the child's stderr; only its descriptor is used.
        return stdio_client(params, errlog=cast(Any, self._stderr))

    async def call(
        self, name: str, arguments: dict[str, Any], on_progress: Progress | None = None
    ) -> CallToolResult:
        """One `tools/call`; cancelling the awaiting task cancels it on the server too (the SDK
        sends `notifications/cancelled`). `on_progress` hears the server's progress reports."""
        return await self.request(
            lambda session: session.call_tool(
                name,
                arguments,
                read_timeout_seconds=self.config.tool_timeout_s,
                progress_callback=on_progress,
            )
        )

    async def request(self, ask: Callable[[ClientSession], Awaitable[T]]) -> T:
        """One request of the live session, its failures in our words."""
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        session = self._session
        if session is None or not self.alive:
            raise McpConnectionLost(self._with_tail("the server is not running"))
        try:
            return await ask(session)
        except MCPError as error:
            if error.code == CONNECTION_CLOSED:
                raise McpConnectionLost(self._with_tail("the server exited")) from None
            if error.code == REQUEST_TIMEOUT:
                raise McpCallError(
                    f"no answer within {self.config.tool_timeout_s:g} s (tool_timeout_s); "
                    "the call was cancelled on the server"
                ) from None
            raise McpCallError(error.message) from None
        except (OSError, asyncio.IncompleteReadError) as error:
            raise McpConnectionLost(self._with_tail(_describe(error))) from None

    async def close(self) -> None:
        self._closing.set()
        owner = self._owner
        if owner is not None and not owner.done():
            if self._session is None:
                owner.cancel()  # still starting: nothing to close gracefully
            # The SDK bounds its own shutdown (stdin closed, then SIGTERM, then SIGKILL).
            await asyncio.wait({owner}, timeout=CLOSE_TIMEOUT_S)
            if not owner.done():
                owner.cancel()
                await asyncio.wait({owner}, timeout=CLOSE_TIMEOUT_S)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def stderr_tail(self) -> str:
        handle = self._stderr
        if handle is None or handle.closed:
            return ""
        size = os.fstat(handle.fileno()).st_size
        data = os.pread(handle.fileno(), STDERR_TAIL, max(0, size - STDERR_TAIL))
        return data.decode("utf-8", errors="replace").strip()

    def _with_tail(self, message: str) -> str:
        tail = self.stderr_tail()
        return f"{message}; its stderr ends with:\n{tail}" if tail else message


async def list_tools(session: ClientSession) -> list[ServerTool]:
    from mcp.types import PaginatedRequestParams

    tools: list[ServerTool] = []
    cursor: str | None = None
    while True:
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        for tool in page.tools:
            annotations = tool.annotations
            tools.append(
                ServerTool(
                    name=tool.name,
                    description=tool.description or "",
                    input_schema=dict(tool.input_schema),
                    read_only=bool(annotations and annotations.read_only_hint),
                    title=tool.title or (annotations.title if annotations else None),
                )
            )
        cursor = page.next_cursor
        if not cursor:
            return tools


def _describe(error: BaseException) -> str:
    """The innermost meaningful message of an error (the SDK nests them in groups)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = str(error) or type(error).__name__
    if isinstance(error, FileNotFoundError):
        return f"command not found ({text})"
    return text
