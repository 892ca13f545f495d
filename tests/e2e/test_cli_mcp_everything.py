"""The MCP project's reference server (`@modelcontextprotocol/server-everything`, pinned in
tests/node/mcp-servers) through the real command line and loop, the model scripted by the local
OpenAI-compatible server: images, resources (listed, linked, added later), instructions and
progress over stdio, and the same essentials over streamable HTTP and the legacy SSE transport.
The in-test server covers what server-everything cannot do on demand (a tool added later,
prompts with arguments; tests/e2e/test_cli_mcp.py and tests/tools/mcp)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.e2e.test_cli import events_of, run_cli, tool_messages
from tests.support.everything import everything_js, served
from tests.support.openai_server import ScriptedOpenAIServer, scripted_openai_server

TINY_IMAGE = "mcp__everything__get-tiny-image"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def _call(tool: str, **arguments: object) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def _run(
    server: ScriptedOpenAIServer, workspace: Path, entry: dict[str, Any]
) -> list[dict[str, Any]]:
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"everything": entry}}))
    done = run_cli(server, workspace, "-p", "go", "--output-format", "jsonl", "--yolo", timeout=60)
    assert done.returncode == 0, done.stderr
    return events_of(done.stdout)


def _after_tools(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages after the last tool result's run: the images sent on (OpenAI Chat)."""
    messages = request["messages"]
    last_tool = max(i for i, m in enumerate(messages) if m["role"] == "tool")
    return messages[last_tool + 1 :]


def _assert_image_reached_the_model(request: dict[str, Any]) -> None:
    [result] = tool_messages(request)
    assert "[image 1: attached in the next user message]" in result["content"]
    # The text before and after the image stays apart (it used to be glued together).
    before, image_line, after = result["content"].split("\n", 2)
    assert before.strip() and after.strip() and image_line.startswith("[image 1")
    [images] = _after_tools(request)
    note, image = images["content"]
    assert images["role"] == "user" and TINY_IMAGE in note["text"]
    assert image["image_url"]["url"].startswith("data:image/png;base64,")


def _read_mcp_resource(request: dict[str, Any]) -> str:
    [tool] = [t for t in request["tools"] if t["function"]["name"] == "read_mcp_resource"]
    return str(tool["function"]["description"])


def test_everything_over_stdio_images_resources_instructions_and_progress(
    workspace: Path,
) -> None:
    session_uri = "demo://resource/session/hello.txt"
    steps = [
        _call(TINY_IMAGE),
        _call("mcp__everything__get-resource-links", count=2),
        _call("read_mcp_resource", server="everything", uri="demo://resource/dynamic/text/2"),
        _call(
            "mcp__everything__gzip-file-as-resource",
            name="hello.txt",
            data="data:text/plain;base64,aGVsbG8=",
        ),
        _call("mcp__everything__trigger-long-running-operation", duration=0.4, steps=2),
        {"text": "Done."},
    ]
    with scripted_openai_server(steps) as server:
        events = _run(
            server, workspace, {"command": "node", "args": [str(everything_js()), "stdio"]}
        )

    first = server.requests[0]
    assert first["messages"][0]["role"] == "system"
    assert '<mcp-server-instructions server="everything">' in first["messages"][0]["content"]
    assert "demo://resource/static/document/features.md" in _read_mcp_resource(first)
    _assert_image_reached_the_model(server.requests[1])
    links = tool_messages(server.requests[2])[-1]
    assert (
        'read_mcp_resource {"server": "everything", "uri": "demo://resource/dynamic/text/2"}'
        in links["content"]
    )
    resource = tool_messages(server.requests[3])[-1]
    assert resource["content"].startswith("Resource 2: This is a plaintext resource")
    # The resource the gzip call added was announced (resources/list_changed) and is listed
    # in the next request.
    assert session_uri not in _read_mcp_resource(server.requests[3])
    assert session_uri in _read_mcp_resource(server.requests[4])
    updates = [e["text"] for e in events if e["type"] == "tool.updated"]
    assert updates == ["1/2 (50%)\n", "2/2 (100%)\n"]
    [finished] = [e for e in events if e["type"] == "turn.finished"]
    assert finished["result"]["type"] == "completed"


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_everything_over_http_and_legacy_sse_images_and_resources(
    transport: Literal["http", "sse"], workspace: Path
) -> None:
    steps = [
        _call(TINY_IMAGE),
        _call("read_mcp_resource", server="everything", uri="demo://resource/dynamic/text/1"),
        {"text": "Done."},
    ]
    with served(transport) as url, scripted_openai_server(steps) as server:
        _run(server, workspace, {"type": transport, "url": url})

    _assert_image_reached_the_model(server.requests[1])
    resource = tool_messages(server.requests[2])[-1]
    assert resource["content"].startswith("Resource 1: This is a plaintext resource")
