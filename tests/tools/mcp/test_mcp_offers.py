"""What servers offer besides tool calls: resources, prompts, instructions, progress, lists that
change, and how our client introduces itself. Against the in-test server over stdio (the same
paths run against server-everything in tests/e2e/test_cli_mcp_everything.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.tools.mcp.conftest import stdio_config
from tui_agent.tools import ToolContext, Workspace
from tui_agent.tools.mcp import McpServers
from tui_agent.tools.mcp._convert import to_tool_result
from tui_agent.tools.mcp._servers import INSTRUCTIONS_CHARS, McpRequestError
from tui_agent.vocab import AbortSignal, ToolResult, ToolUpdate


@pytest.fixture
async def fx() -> AsyncIterator[McpServers]:
    servers = McpServers([stdio_config()])
    servers.start()
    await servers.wait_started()
    yield servers
    await servers.aclose()


async def _call(
    servers: McpServers, tool_name: str, updates: list[ToolUpdate] | None = None, **args: object
) -> ToolResult:
    tool = servers.get(tool_name)
    assert tool is not None, f"{tool_name} not offered: {[t.name for t in servers.tools()]}"
    seen = updates if updates is not None else []
    ctx = ToolContext(AbortSignal(), seen.append, lambda ack: None, Workspace("/tmp"), "c1")
    return await tool.execute(tool.Args.model_validate(args), ctx)


async def test_the_client_introduces_itself_as_tui_agent_with_its_version(
    fx: McpServers,
) -> None:
    from importlib.metadata import version

    result = await _call(fx, "mcp__fx__client")
    assert result.output == f"tui-agent {version('tui-agent')}"


async def test_progress_reports_become_one_update_line_each(fx: McpServers) -> None:
    updates: list[ToolUpdate] = []
    result = await _call(fx, "mcp__fx__steps", updates, count=2)
    assert result.output == "2 steps done"
    assert [u.text for u in updates] == ["1/2 (50%) step 1\n", "2/2 (100%) step 2\n"]


async def test_a_tool_added_later_is_offered_once_the_call_that_added_it_returns(
    fx: McpServers,
) -> None:
    assert fx.get("mcp__fx__fresh") is None
    await _call(fx, "mcp__fx__learn", name="fresh")
    # The server's tools/list_changed came before its answer: the refresh is done.
    assert "mcp__fx__fresh" in {spec.name for spec in fx.specs()}
    assert (await _call(fx, "mcp__fx__fresh")).output == "fresh works"
    await fx.settled()
    assert "fresh_prompt" in {prompt.name for _, prompt in fx.prompts()}


async def test_resources_are_listed_and_read_through_read_mcp_resource(fx: McpServers) -> None:
    assert [(server, r.uri) for server, r in fx.resources()] == [("fx", "fixture://notes")]
    reader = fx.get("read_mcp_resource")
    assert reader is not None and "fixture://notes" in reader.description
    result = await _call(fx, "read_mcp_resource", server="fx", uri="fixture://notes")
    assert result.output == "the notes say hello" and not result.is_error
    missing = await _call(fx, "read_mcp_resource", server="nope", uri="fixture://notes")
    assert missing.is_error and 'no MCP server is named "nope"' in missing.text


async def test_prompts_are_listed_with_their_arguments_and_filled_in(fx: McpServers) -> None:
    [(server, review)] = fx.prompts()
    assert server == "fx" and review.name == "review"
    assert [(a.name, a.required) for a in review.arguments] == [("path", True), ("focus", False)]
    assert await fx.get_prompt("fx", "review", {"path": "a.py"}) == (
        "Review a.py, looking for bugs."
    )
    with pytest.raises(McpRequestError, match="review"):
        await fx.get_prompt("fx", "review", {})


async def test_instructions_are_marked_with_the_server_and_bounded(fx: McpServers) -> None:
    said = fx.instructions()
    assert said.startswith('<mcp-server-instructions server="fx">')
    assert "Fixture rule: call echo before anything else." in said
    assert len(said) < INSTRUCTIONS_CHARS + 100


def test_a_resource_link_names_the_call_that_reads_it() -> None:
    from mcp.types import CallToolResult, ResourceLink, TextContent

    result = CallToolResult(
        content=[
            TextContent(text="see"),
            ResourceLink(uri="demo://a", name="A"),
        ]
    )
    text = to_tool_result(result, "docs").text
    assert text.startswith("see\n")
    assert 'read_mcp_resource {"server": "docs", "uri": "demo://a"}' in text
