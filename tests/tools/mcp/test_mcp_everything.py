"""server-everything (the MCP project's reference server) through `McpServers`: its prompts are
listed and filled in with their arguments, structured content that repeats the text is sent
once, and a long call cancelled by the user ends at once while the server goes on answering.
The loop-level paths (images, resources, progress, list_changed) run against it in
tests/e2e/test_cli_mcp_everything.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from tests.support.everything import everything_js
from tui_agent.tools import ToolAborted, ToolContext, Workspace
from tui_agent.tools.mcp import McpServerConfig, McpServers
from tui_agent.vocab import AbortSignal, ToolUpdate


@pytest.fixture
async def everything() -> AsyncIterator[McpServers]:
    config = McpServerConfig(
        name="everything", command="node", args=(str(everything_js()), "stdio")
    )
    servers = McpServers([config])
    servers.start()
    await servers.wait_started()
    yield servers
    await servers.aclose()


async def test_prompts_are_listed_and_filled_in_with_their_arguments(
    everything: McpServers,
) -> None:
    prompts = {prompt.name: prompt for _, prompt in everything.prompts()}
    assert {"simple-prompt", "args-prompt"} <= set(prompts)
    assert [(a.name, a.required) for a in prompts["args-prompt"].arguments] == [
        ("city", True),
        ("state", False),
    ]
    text = await everything.get_prompt("everything", "args-prompt", {"city": "Paris"})
    assert "Paris" in text


async def test_a_cancelled_long_call_ends_at_once_and_the_server_still_answers(
    everything: McpServers,
) -> None:
    tool = everything.get("mcp__everything__trigger-long-running-operation")
    assert tool is not None
    signal, started = AbortSignal(), asyncio.Event()

    def on_update(update: ToolUpdate) -> None:
        started.set()  # the first progress report: the operation runs on the server

    ctx = ToolContext(signal, on_update, lambda ack: None, Workspace("/tmp"), "c1")
    args = tool.Args.model_validate({"duration": 60, "steps": 60})
    call = asyncio.ensure_future(tool.execute(args, ctx))
    await started.wait()
    signal.abort("user_cancelled")
    with pytest.raises(ToolAborted):
        await call
    echo = everything.get("mcp__everything__echo")
    assert echo is not None
    fresh = ToolContext(AbortSignal(), on_update, lambda ack: None, Workspace("/tmp"), "c2")
    answer = await echo.execute(echo.Args.model_validate({"message": "still here"}), fresh)
    assert "still here" in answer.text


async def test_structured_content_that_repeats_the_text_is_sent_once(
    everything: McpServers,
) -> None:
    tool = everything.get("mcp__everything__get-structured-content")
    assert tool is not None
    ctx = ToolContext(AbortSignal(), lambda update: None, lambda ack: None, Workspace("/tmp"), "c1")
    result = await tool.execute(tool.Args.model_validate({"location": "New York"}), ctx)
    assert isinstance(result.output, str)
    assert json.loads(result.output)["temperature"]  # the text alone: one JSON document
