"""MCP servers through `McpServers`: tools offered, results converted, faults contained.

A real server process (the SDK's MCPServer in tests/support/mcp_server.py) over stdio and over
streamable HTTP. No test waits on the clock: a "hang" never answers, so a short tool timeout
always fires; cancellation is confirmed by asking the server itself.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence

import pytest

from tests.tools.mcp.conftest import stdio_config
from tui_agent.tools import ToolAborted, ToolAccesses, ToolContext, Workspace, conflict
from tui_agent.tools.mcp import McpServerConfig, McpServers, McpTool, TrustAnswer
from tui_agent.vocab import AbortSignal, ImagePart, TextPart, ToolResult


class Recorder:
    def __init__(self) -> None:
        self.notices: list[tuple[str, str]] = []
        self.changes = 0

    def notice(self, level: str, text: str) -> None:
        self.notices.append((level, text))

    def change(self) -> None:
        self.changes += 1


@pytest.fixture
async def servers_for() -> AsyncIterator[object]:
    made: list[McpServers] = []

    async def make(configs: Sequence[McpServerConfig], **kwargs: object) -> McpServers:
        servers = McpServers(configs, **kwargs)  # type: ignore[arg-type]
        made.append(servers)
        servers.start()
        await servers.wait_started()
        return servers

    yield make
    for servers in made:
        await servers.aclose()


def _ctx(tmp_path: object, signal: AbortSignal | None = None) -> ToolContext:
    return ToolContext(
        signal or AbortSignal(),
        lambda update: None,
        lambda ack: None,
        Workspace(tmp_path),
        "c1",  # type: ignore[arg-type]
    )


async def _call(servers: McpServers, name: str, tmp_path: object, **args: object) -> ToolResult:
    tool = servers.get(name)
    assert tool is not None, f"{name} not offered: {[t.name for t in servers.tools()]}"
    return await tool.execute(tool.Args.model_validate(args), _ctx(tmp_path))


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_server_tools_are_offered_and_answer(
    transport: str, servers_for: object, http_url_or_none: str | None, tmp_path: object
) -> None:
    config = (
        stdio_config()
        if transport == "stdio"
        # A busy machine may take long to connect: the start-up clock is not what is tested.
        else McpServerConfig(
            name="fx", transport="http", url=http_url_or_none or "", startup_timeout_s=120
        )
    )
    servers = await servers_for([config])  # type: ignore[operator]

    names = {spec.name for spec in servers.specs()}
    expected = {"mcp__fx__echo", "mcp__fx__fail", "mcp__fx__image", "mcp__fx__big"}
    assert expected <= names, servers.statuses()
    echo = next(spec for spec in servers.specs() if spec.name == "mcp__fx__echo")
    assert echo.parameters["properties"]["text"]["type"] == "string"
    assert echo.description == "Say the text back."
    result = await _call(servers, "mcp__fx__echo", tmp_path, text="hi")
    assert (result.output, result.is_error) == ("echo: hi", False)
    assert servers.statuses()[0].state == "ready"


@pytest.fixture
def http_url_or_none(request: pytest.FixtureRequest) -> str | None:
    if "http" not in request.node.name:
        return None
    return str(request.getfixturevalue("http_url"))


async def test_results_keep_errors_images_and_structured_content(
    servers_for: object, tmp_path: object
) -> None:
    servers = await servers_for([stdio_config()])  # type: ignore[operator]

    failed = await _call(servers, "mcp__fx__fail", tmp_path, why="no disk")
    assert failed.is_error and failed.output == "it failed: no disk"
    image = await _call(servers, "mcp__fx__image", tmp_path)
    assert isinstance(image.output, tuple)
    assert image.output[0] == TextPart(text="a picture")
    assert isinstance(image.output[1], ImagePart) and image.output[1].media_type == "image/png"
    structured = await _call(servers, "mcp__fx__structured", tmp_path)
    assert isinstance(structured.output, str)
    text, _, data = structured.output.partition("\n")
    assert text == "see structured" and json.loads(data) == {"answer": 42}
    big = await _call(servers, "mcp__fx__big", tmp_path)
    assert len(big.text) > 200_000 and not big.is_error


def _config(transport: str, url: str | None, **overrides: object) -> McpServerConfig:
    if transport == "stdio":
        return stdio_config(**overrides)
    return McpServerConfig(name="fx", transport="http", url=url or "", **overrides)  # type: ignore[arg-type]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_call_that_hangs_times_out_and_is_cancelled_on_the_server(
    transport: str, servers_for: object, http_url_or_none: str | None, tmp_path: object
) -> None:
    config = _config(transport, http_url_or_none, tool_timeout_s=0.5)
    servers = await servers_for([config])  # type: ignore[operator]

    result = await _call(servers, "mcp__fx__hang", tmp_path)

    assert result.is_error and "tool_timeout_s" in result.text
    seen = await _call(servers, "mcp__fx__was_cancelled", tmp_path)
    assert seen.output == "cancelled"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_cancelled_call_is_cancelled_on_the_server(
    transport: str, servers_for: object, http_url_or_none: str | None, tmp_path: object
) -> None:
    servers = await servers_for([_config(transport, http_url_or_none)])  # type: ignore[operator]
    tool = servers.get("mcp__fx__hang")
    assert tool is not None
    signal = AbortSignal()
    call = asyncio.ensure_future(tool.execute(tool.Args(), _ctx(tmp_path, signal)))
    await asyncio.sleep(0)  # the call is on its way
    signal.abort("user_cancelled")

    with pytest.raises(ToolAborted):
        await call
    seen = await _call(servers, "mcp__fx__was_cancelled", tmp_path)
    assert seen.output == "cancelled"


async def test_a_crash_fails_the_call_restarts_once_then_disables(
    servers_for: object, tmp_path: object
) -> None:
    recorder = Recorder()
    servers = await servers_for([stdio_config()], on_notice=recorder.notice)  # type: ignore[operator]

    crashed = await _call(servers, "mcp__fx__crash", tmp_path)
    assert crashed.is_error and "about to crash on purpose" in crashed.text
    assert servers.statuses()[0].state == "crashed"
    again = await _call(servers, "mcp__fx__echo", tmp_path, text="back")
    assert again.output == "echo: back"  # restarted for this call
    await _call(servers, "mcp__fx__crash", tmp_path)

    status = servers.statuses()[0]
    assert status.state == "disabled" and status.tools == ()
    assert servers.get("mcp__fx__echo") is None
    assert recorder.notices[-1][0] == "error" and "disabled" in recorder.notices[-1][1]
    assert await servers.reconnect("fx")
    assert (await _call(servers, "mcp__fx__echo", tmp_path, text="x")).output == "echo: x"


async def test_a_http_server_that_dies_fails_the_call_and_is_not_reached_again(
    servers_for: object, http_url: str, tmp_path: object
) -> None:
    config = McpServerConfig(name="fx", transport="http", url=http_url, startup_timeout_s=5)
    servers = await servers_for([config])  # type: ignore[operator]

    crashed = await _call(servers, "mcp__fx__crash", tmp_path)
    assert crashed.is_error and 'MCP server "fx" failed during "crash"' in crashed.text
    after = await _call(servers, "mcp__fx__echo", tmp_path, text="x")
    assert after.is_error and servers.statuses()[0].state == "failed"


async def test_a_server_that_cannot_start_says_why(servers_for: object) -> None:
    recorder = Recorder()
    missing = McpServerConfig(name="nope", command="/nonexistent/mcp-server")
    dies = McpServerConfig(
        name="dies",
        command="sh",
        args=("-c", "echo 'cannot open database' >&2; exit 1"),
    )

    servers = await servers_for([missing, dies], on_notice=recorder.notice)  # type: ignore[operator]

    by_name = {status.name: status for status in servers.statuses()}
    assert by_name["nope"].state == "failed" and "not found" in (by_name["nope"].error or "")
    assert by_name["dies"].state == "failed"
    assert "cannot open database" in (by_name["dies"].error or "")
    assert [level for level, _ in recorder.notices] == ["error", "error"]


async def test_a_server_that_never_answers_fails_after_its_start_up_time(
    servers_for: object,
) -> None:
    silent = McpServerConfig(name="silent", command="sleep", args=("600",), startup_timeout_s=0.5)

    servers = await servers_for([silent])  # type: ignore[operator]

    status = servers.statuses()[0]
    assert status.state == "failed" and status.error == "did not start within 0.5 s"


class Trust:
    def __init__(self, approved: bool) -> None:
        self.is_approved = approved
        self.remembered: list[str] = []

    def approved(self, servers: Sequence[McpServerConfig]) -> bool:
        return self.is_approved

    def remember(self, servers: Sequence[McpServerConfig]) -> None:
        self.remembered += [server.name for server in servers]


WORKSPACE_SERVER = McpServerConfig(name="ws", command="/nonexistent/never-run", source="workspace")


async def test_workspace_servers_are_skipped_when_nobody_can_approve(servers_for: object) -> None:
    recorder = Recorder()
    servers = await servers_for(  # type: ignore[operator]
        [WORKSPACE_SERVER], trust=Trust(False), on_notice=recorder.notice
    )

    status = servers.statuses()[0]
    assert status.state == "skipped" and "--yolo" in (status.error or "")
    assert "ws" in recorder.notices[0][1]


@pytest.mark.parametrize(
    ("answer", "state", "remembered"),
    [
        ("always", "failed", ["ws"]),  # started (and failed: the command does not exist)
        ("once", "failed", []),
        ("deny", "skipped", []),
    ],
)
async def test_the_users_answer_decides_whether_workspace_servers_start(
    servers_for: object, answer: TrustAnswer, state: str, remembered: list[str]
) -> None:
    trust = Trust(False)
    asked: list[list[str]] = []

    async def ask(configs: Sequence[McpServerConfig]) -> TrustAnswer:
        asked.append([config.command_line() for config in configs])
        return answer

    servers = await servers_for([WORKSPACE_SERVER], trust=trust, ask_trust=ask)  # type: ignore[operator]

    assert asked == [["/nonexistent/never-run"]]
    assert servers.statuses()[0].state == state
    assert trust.remembered == remembered


def test_calls_to_one_server_are_serialised_unless_read_only() -> None:
    from tui_agent.tools.mcp._connection import ServerTool

    async def never(name: str, args: dict[str, object]) -> ToolResult:
        raise AssertionError

    def tool(server: str, name: str, read_only: bool) -> McpTool:
        return McpTool(server, ServerTool(name, "", {"type": "object"}, read_only), never)

    args = McpTool.Args()
    a_write, a_other = tool("a", "w", False), tool("a", "x", False)
    b_write, a_read = tool("b", "w", False), tool("a", "r", True)

    assert conflict(a_write.accesses(args), a_other.accesses(args))
    assert not conflict(a_write.accesses(args), b_write.accesses(args))
    assert a_read.accesses(args) == ToolAccesses.none()


def _remote(server: str, name: str) -> McpTool:
    from tui_agent.tools.mcp._connection import ServerTool

    async def answer(tool: str, args: dict[str, object]) -> ToolResult:
        return ToolResult(output=f"{tool} {args}")

    return McpTool(server, ServerTool(name, "d", {"type": "object", "title": "x"}, False), answer)


class Source:
    def __init__(self, *tools: McpTool) -> None:
        self._tools = {tool.name: tool for tool in tools}

    def get(self, name: str) -> McpTool | None:
        return self._tools.get(name)

    def tools(self) -> list[McpTool]:
        return list(self._tools.values())


def test_a_registry_offers_its_sources_tools_after_its_own(tmp_path: object) -> None:
    from tui_agent.tools import default_registry

    registry = default_registry(Workspace(tmp_path))  # type: ignore[arg-type]
    registry.add_source(Source(_remote("git", "git_status")))

    assert registry.get("mcp__git__git_status") is not None and "mcp__git__git_status" in registry
    assert [spec.name for spec in registry.specs()][-1] == "mcp__git__git_status"
    assert registry.specs()[-1].parameters == {"type": "object", "properties": {}}
    assert len(registry) == 7


async def test_mcp_tools_ask_by_default_and_a_star_rule_allows_a_whole_server() -> None:
    from tui_agent.tools import Approvals

    status, other = _remote("git", "git_status"), _remote("time", "now")
    args = McpTool.Args()

    assert not Approvals("ask").allows(status, args)
    assert not Approvals("auto-edit").allows(status, args)
    ruled = Approvals("ask", rules=["mcp__git__*"])
    assert ruled.allows(status, args) and not ruled.allows(other, args)


def test_names_are_adapted_only_where_providers_need_it() -> None:
    from tui_agent.tools.mcp import tool_name

    assert tool_name("git", "git_status") == "mcp__git__git_status"
    assert tool_name("my.server", "do it") == "mcp__my_server__do_it"
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == 64 and long != tool_name("s" * 40, "t" * 39 + "u")
