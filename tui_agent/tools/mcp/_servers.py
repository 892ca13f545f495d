"""The MCP servers of one loop: start-up, trust, tools, faults and reconnecting.

`McpServers(configs, ...)` holds one entry per configured server. `start()` connects them all
concurrently in the background (servers from a workspace's `.mcp.json` only once approved);
`wait_started()` waits until every start-up has settled (each bounded by its
`startup_timeout_s`). `tools()` are the live servers' tools (and `read_mcp_resource` while a
server offers resources); `statuses()` what `/mcp` shows; `resources()`, `prompts()` and
`instructions()` what else the servers offer.

A server's `list_changed` notification refreshes that list in the background; a call to the
server waits for the refresh its own notification started, and `settled()` (awaited before
each step) waits for all of them, so the next request sees the new tool table.

Faults: a call that loses its server fails with the server's stderr tail; the next call
restarts the server once; a server that dies again is disabled with a notice until the user
reconnects it (`reconnect`). A call never raises: every fault is an error result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import field
from typing import Any, Literal, Protocol

from tui_agent.lazy_dataclass import dataclass
from tui_agent.tools._base import Tool
from tui_agent.tools.elicitation import Elicit, ElicitAnswer, ElicitRequest, decline_unanswerable
from tui_agent.tools.mcp._auth import (
    Authorizer,
    OpenBrowser,
    needs_login,
    oauth_failure,
    open_browser,
)
from tui_agent.tools.mcp._config import McpServerConfig
from tui_agent.tools.mcp._connection import (
    McpCallError,
    McpConnection,
    McpConnectionLost,
    McpStartError,
    Progress,
    ServerTool,
    list_tools,
)
from tui_agent.tools.mcp._convert import to_tool_result
from tui_agent.tools.mcp._listing import (
    ServerPrompt,
    ServerResource,
    list_prompts,
    list_resources,
    prompt_text,
    resource_parts,
)
from tui_agent.tools.mcp._notifications import ListKind
from tui_agent.tools.mcp._resources import ReadMcpResource
from tui_agent.tools.mcp._tool import McpTool
from tui_agent.vocab import TextPart, ToolResult, ToolSpec, error_result

ServerState = Literal[
    "off", "skipped", "waiting", "starting", "ready", "failed", "crashed", "disabled", "login"
]
TrustAnswer = Literal["once", "always", "deny"]
NoticeLevel = Literal["info", "warning", "error"]
AskTrust = Callable[[Sequence[McpServerConfig]], Awaitable[TrustAnswer]]
MAX_DEATHS = 2  # the second death disables the server
NOT_APPROVED = "not approved for this workspace (approve it once in the app, or run with --yolo)"
INSTRUCTIONS_CHARS = 2_000  # of one server's instructions in the system prompt
REFRESH_WAIT_S = 10.0  # how long a step waits for a server to list what changed


class McpRequestError(Exception):
    """A prompt or resource could not be had from a server; the message says why."""


class TrustStore(Protocol):
    """Which workspace servers the user already approved (kept by the session layer)."""

    def approved(self, servers: Sequence[McpServerConfig]) -> bool: ...

    def remember(self, servers: Sequence[McpServerConfig]) -> None: ...


@dataclass(frozen=True)
class McpServerStatus:
    name: str
    source: str
    state: ServerState
    command: str
    tools: tuple[str, ...] = ()
    error: str | None = None
    auth: str | None = None  # OAuth servers: logged in or not (never a token)


@dataclass(eq=False)
class _Entry:
    config: McpServerConfig
    state: ServerState = "waiting"
    error: str | None = None
    tools: tuple[McpTool, ...] = ()
    connection: McpConnection | None = None
    deaths: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    resources: tuple[ServerResource, ...] = ()
    prompts: tuple[ServerPrompt, ...] = ()
    stale: set[ListKind] = field(default_factory=set)
    refreshing: asyncio.Task[None] | None = None
    authorizer: Authorizer | None = None


class McpServers:
    def __init__(
        self,
        configs: Sequence[McpServerConfig],
        *,
        trust: TrustStore | None = None,
        ask_trust: AskTrust | None = None,
        problems: Sequence[str] = (),
        on_change: Callable[[], None] = lambda: None,
        on_notice: Callable[[NoticeLevel, str], None] = lambda level, text: None,
        browser: OpenBrowser = open_browser,
    ) -> None:
        self._entries = {config.name: _Entry(config) for config in configs}
        for entry in self._entries.values():
            if entry.config.transport == "http" and entry.config.oauth is not None:
                entry.authorizer = Authorizer(
                    entry.config,
                    entry.config.oauth,
                    on_url=self._login_url(entry.config.name),
                    browser=browser,
                )
        # Who answers a server's `elicitation/create`: a front end that can ask sets it.
        self.elicit: Elicit = decline_unanswerable(
            lambda text: on_notice("warning", text), "nobody here can answer it"
        )
        self._problems = tuple(problems)
        self._trust = trust
        self._ask_trust = ask_trust
        self._on_change = on_change
        self._on_notice = on_notice
        self._started: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._by_name: dict[str, Tool[Any]] = {}
        self._specs: tuple[ToolSpec, ...] = ()

    # -- views -----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._entries)

    def statuses(self) -> list[McpServerStatus]:
        return [
            McpServerStatus(
                name=entry.config.name,
                source=entry.config.source,
                state=entry.state,
                command=entry.config.command_line(),
                tools=tuple(tool.name for tool in entry.tools),
                error=entry.error,
                auth=entry.authorizer.state() if entry.authorizer else None,
            )
            for entry in self._entries.values()
        ]

    def tools(self) -> list[Tool[Any]]:
        return list(self._by_name.values())

    def get(self, name: str) -> Tool[Any] | None:
        return self._by_name.get(name)

    def specs(self) -> tuple[ToolSpec, ...]:
        return self._specs

    def resources(self) -> list[tuple[str, ServerResource]]:
        """Every live server's listed resources, with the server's name."""
        return [(name, item) for name, entry in self._live() for item in entry.resources]

    def prompts(self) -> list[tuple[str, ServerPrompt]]:
        return [(name, item) for name, entry in self._live() for item in entry.prompts]

    def instructions(self) -> str:
        """The live servers' instructions for the system prompt, each bounded and marked with
        its server's name (they are the server's words, not the user's)."""
        blocks = []
        for name, entry in self._live():
            text = entry.connection.instructions.strip() if entry.connection else ""
            if len(text) > INSTRUCTIONS_CHARS:
                text = text[:INSTRUCTIONS_CHARS] + " […]"
            if text:
                blocks.append(
                    f'<mcp-server-instructions server="{name}">\n{text}\n</mcp-server-instructions>'
                )
        return "\n\n".join(blocks)

    def _live(self) -> list[tuple[str, _Entry]]:
        return [(name, entry) for name, entry in self._entries.items() if entry.state == "ready"]

    # -- start-up --------------------------------------------------------------------------
    def start(self) -> None:
        """Connect every server in the background (once)."""
        if self._started is None and (self._entries or self._problems):
            self._started = asyncio.create_task(self._start_all(), name="mcp:start")

    async def wait_started(self) -> None:
        if self._started is not None:
            await asyncio.shield(self._started)

    async def _start_all(self) -> None:
        for problem in self._problems:
            self._on_notice("warning", problem)
        trusted, untrusted = [], []
        for entry in self._entries.values():
            if not entry.config.enabled:
                self._set(entry, "off", "enabled = false")
            elif entry.config.trusted:
                trusted.append(entry)
            else:
                untrusted.append(entry)
        starts = [self._spawn(self._connect(entry)) for entry in trusted]
        if untrusted and await self._approved([entry.config for entry in untrusted]):
            starts += [self._spawn(self._connect(entry)) for entry in untrusted]
        else:
            for entry in untrusted:
                self._set(entry, "skipped", NOT_APPROVED)
            if untrusted:
                names = ", ".join(entry.config.name for entry in untrusted)
                self._on_notice(
                    "warning", f"MCP servers from .mcp.json skipped: {names}: {NOT_APPROVED}"
                )
        await asyncio.gather(*starts, return_exceptions=True)

    async def _approved(self, configs: list[McpServerConfig]) -> bool:
        if self._trust is not None and self._trust.approved(configs):
            return True
        if self._ask_trust is None:
            return False
        answer = await self._ask_trust(configs)
        if answer == "always" and self._trust is not None:
            self._trust.remember(configs)
        return answer != "deny"

    async def _connect(self, entry: _Entry) -> None:
        self._set(entry, "starting", None)
        connection = McpConnection(
            entry.config,
            on_list_changed=lambda kind: self._list_changed(entry, kind),
            authorizer=entry.authorizer,
            elicit=self._ask,
        )
        try:
            listed = await connection.open()
        except McpStartError as error:
            if needs_login(error):
                self._needs_login(entry)
                return
            failure = oauth_failure(error)
            if failure is not None:
                error = McpStartError(
                    f"it needs authorization (401) and the OAuth login failed: {failure}"
                )
            self._set(entry, "failed", str(error))
            self._on_notice("error", f'MCP server "{entry.config.name}" failed to start: {error}')
            return
        entry.connection = connection
        entry.tools = self._tools_of(entry, listed)
        self._set(entry, "ready", None)
        # Listed as a change is: a server whose resources or prompts cannot be listed (a
        # warning says so) still serves its tools.
        self._list_changed(entry, "resources")
        self._list_changed(entry, "prompts")
        if entry.refreshing is not None:
            await entry.refreshing

    def _tools_of(self, entry: _Entry, listed: Sequence[ServerTool]) -> tuple[McpTool, ...]:
        async def call(tool: str, arguments: dict[str, Any], progress: Progress) -> ToolResult:
            return await self._call(entry, tool, arguments, progress)

        return tuple(McpTool(entry.config.name, tool, call) for tool in listed)

    # -- lists that change -----------------------------------------------------------------
    def _list_changed(self, entry: _Entry, kind: ListKind) -> None:
        entry.stale.add(kind)
        if entry.refreshing is None or entry.refreshing.done():
            entry.refreshing = self._spawn(self._refresh(entry))

    async def _refresh(self, entry: _Entry) -> None:
        while entry.stale and (connection := entry.connection) is not None:
            kinds, entry.stale = entry.stale, set()
            try:
                if "tools" in kinds:
                    entry.tools = self._tools_of(entry, await connection.request(list_tools))
                if "resources" in kinds:
                    entry.resources = await connection.request(list_resources)
                if "prompts" in kinds:
                    entry.prompts = await connection.request(list_prompts)
            except (McpCallError, McpConnectionLost) as error:
                self._on_notice(
                    "warning",
                    f'MCP server "{entry.config.name}" could not list its '
                    f"{' and '.join(sorted(kinds))}: {error}",
                )
                return
            self._set(entry, entry.state, entry.error)

    async def settled(self) -> None:
        """Waits (boundedly) for every refresh a `list_changed` started."""
        pending = {
            e.refreshing for e in self._entries.values() if e.refreshing and not e.refreshing.done()
        }
        if pending:
            await asyncio.wait(pending, timeout=REFRESH_WAIT_S)

    # -- resources and prompts -------------------------------------------------------------
    async def read_resource(self, server: str, uri: str) -> ToolResult:
        """`read_mcp_resource`: never raises, every fault is an error result."""
        try:
            connection = self._ready(server)
            result = await connection.request(lambda session: session.read_resource(uri))
        except (McpRequestError, McpCallError, McpConnectionLost) as error:
            return error_result(f'could not read {uri} from MCP server "{server}": {error}')
        parts = resource_parts(result)
        if all(isinstance(part, TextPart) for part in parts):
            return ToolResult(output="\n".join(p.text for p in parts if isinstance(p, TextPart)))
        return ToolResult(output=parts)

    async def get_prompt(self, server: str, name: str, arguments: dict[str, str]) -> str:
        """A server's prompt filled in, as the text to send; raises `McpRequestError`."""
        try:
            connection = self._ready(server)
            result = await connection.request(lambda session: session.get_prompt(name, arguments))
        except (McpCallError, McpConnectionLost) as error:
            raise McpRequestError(f'MCP server "{server}", prompt "{name}": {error}') from None
        return prompt_text(result)

    def _ready(self, server: str) -> McpConnection:
        entry = self._entries.get(server)
        if entry is None:
            known = ", ".join(self._entries) or "none"
            raise McpRequestError(f'no MCP server is named "{server}" (known: {known})')
        if entry.state != "ready" or entry.connection is None:
            raise McpRequestError(f"it is {entry.state}: {entry.error}")
        return entry.connection

    # -- calls and faults ------------------------------------------------------------------
    async def _call(
        self, entry: _Entry, tool: str, arguments: dict[str, Any], progress: Progress
    ) -> ToolResult:
        name = entry.config.name
        if entry.state == "crashed":
            async with entry.lock:
                if entry.state == "crashed":
                    await self._connect(entry)
        connection = entry.connection
        if entry.state != "ready" or connection is None:
            return error_result(f'MCP server "{name}" is {entry.state}: {entry.error}')
        try:
            result = await connection.call(tool, arguments, progress)
        except McpConnectionLost as error:
            if entry.authorizer is not None and entry.authorizer.wanted_login:
                # More scope, or a refused refresh, and nobody here to log in: not a crash.
                entry.connection = None
                self._spawn(connection.close())
                self._needs_login(entry)
                return error_result(f'MCP server "{name}" {_login_hint(entry.config)}')
            self._died(entry, connection, str(error))
            return error_result(f'MCP server "{name}" failed during "{tool}": {error}')
        except McpCallError as error:
            return error_result(f'MCP server "{name}" could not run "{tool}": {error}')
        if entry.refreshing is not None and not entry.refreshing.done():
            # The call changed the server's lists (its notification came before the answer).
            await asyncio.wait({entry.refreshing}, timeout=REFRESH_WAIT_S)
        return to_tool_result(result, name)

    def _died(self, entry: _Entry, connection: McpConnection, why: str) -> None:
        if entry.connection is not connection:
            return  # another call already reported this death
        entry.connection = None
        entry.deaths += 1
        self._spawn(connection.close())
        name = entry.config.name
        if entry.deaths >= MAX_DEATHS:
            self._set(entry, "disabled", why)
            self._on_notice(
                "error",
                f'MCP server "{name}" died again and is disabled: {why}\n'
                f"(/mcp reconnect {name} starts it again)",
            )
        else:
            self._set(entry, "crashed", why)
            self._on_notice(
                "warning", f'MCP server "{name}" died; it restarts on the next call: {why}'
            )

    async def reconnect(self, name: str) -> bool:
        """Stop the server if it runs and start it again (approval is not asked again)."""
        entry = self._entries.get(name)
        if entry is None:
            return False
        async with entry.lock:
            connection, entry.connection = entry.connection, None
            if connection is not None:
                await connection.close()
            entry.deaths = 0
            await self._connect(entry)
        return True

    # -- OAuth and elicitation -------------------------------------------------------------
    async def login(self, name: str) -> str | None:
        """Log in to an OAuth server (browser and loopback) and connect it; None when done,
        else why not."""
        entry = self._entries.get(name)
        if entry is None:
            return f"no MCP server named {name!r} (/mcp lists them)"
        if entry.authorizer is None:
            return f'MCP server "{name}" does not use OAuth (only HTTP servers log in)'
        # From now on this server may ask again (a refused refresh, more scope mid-session).
        entry.authorizer.interactive = True
        await self.reconnect(name)
        if entry.state != "ready":
            return f'MCP server "{name}" is not up after the login: {entry.error}'
        return None

    async def logout(self, name: str) -> str | None:
        """Forget an OAuth server's tokens and disconnect it; None when done, else why not."""
        entry = self._entries.get(name)
        if entry is None or entry.authorizer is None:
            return f"no MCP server named {name!r} that logs in with OAuth (/mcp lists them)"
        async with entry.lock:
            connection, entry.connection = entry.connection, None
            if connection is not None:
                await connection.close()
            entry.authorizer.tokens.clear()
            entry.authorizer.interactive = False
            self._set(entry, "login", _login_hint(entry.config))
        return None

    def _needs_login(self, entry: _Entry) -> None:
        name = entry.config.name
        self._set(entry, "login", _login_hint(entry.config))
        self._on_notice("warning", f'MCP server "{name}" {_login_hint(entry.config)}')

    def _login_url(self, name: str) -> Callable[[str], None]:
        def show(url: str) -> None:
            self._on_notice(
                "info",
                f'Log in to MCP server "{name}" in your browser. If none opened, open:\n{url}',
            )

        return show

    async def _ask(self, request: ElicitRequest) -> ElicitAnswer:
        return await self.elicit(request)  # looked up per request: a front end sets it later

    # -- bookkeeping -----------------------------------------------------------------------
    def _set(self, entry: _Entry, state: ServerState, error: str | None) -> None:
        entry.state, entry.error = state, error
        if state not in ("ready", "crashed"):  # a crashed server's tools restart it when called
            entry.tools = ()
        self._by_name = {tool.name: tool for each in self._entries.values() for tool in each.tools}
        if any(e.connection.offers_resources for _, e in self._live() if e.connection):
            reader = ReadMcpResource(self.read_resource, self.resources())
            self._by_name[reader.name] = reader
        self._specs = tuple(tool.spec() for tool in self._by_name.values())
        self._on_change()

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def aclose(self) -> None:
        if self._started is not None and not self._started.done():
            self._started.cancel()
            await asyncio.gather(self._started, return_exceptions=True)
        closing = [entry.connection.close() for entry in self._entries.values() if entry.connection]
        for entry in self._entries.values():
            entry.connection = None
        await asyncio.gather(*closing, *self._tasks, return_exceptions=True)


def _login_hint(config: McpServerConfig) -> str:
    name = config.name
    if config.source == "client":
        # A front end's server (an editor's, over ACP) is in no file the login command reads,
        # and the session cannot open a browser: its URL names it to the command.
        return (
            f"needs a login: run tui-agent mcp login {name} --url {config.url} in a terminal, "
            "then start a new session"
        )
    return f"needs a login: /mcp login {name} in the app, or tui-agent mcp login {name}"
