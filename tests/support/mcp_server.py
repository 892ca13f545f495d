"""A small MCP server for the client's fault tests, built on the SDK's MCPServer (FastMCP's
successor in mcp 2): `python mcp_server.py stdio`, `python mcp_server.py http` (streamable
HTTP on 127.0.0.1, an ephemeral port, printed as `PORT <n>` on stdout once it listens) or
`python mcp_server.py sse` (the legacy HTTP+SSE transport at `/sse`, the port printed the same).

Tools: `echo` and `env` (read-only), `fail` (an error result), `big` (200 KB of text),
`image` (a PNG), `structured` (structuredContent), `hang` (never returns; a cancel is remembered),
`was_cancelled` (waits until `hang` saw its cancellation), `crash` (writes to stderr and dies),
`client` (the client's name and version as it introduced itself), `steps` (reports progress with
a message per step), `learn` (adds a tool and a prompt, and says so with `list_changed`).
A resource `fixture://notes`, a prompt `review(path, focus?)`, and instructions for the model.
`python mcp_server.py stdio-ignoring-eof PID_FILE` serves stdio but stays when its input ends.
"""

from __future__ import annotations

import base64
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ImageContent, TextContent, ToolAnnotations

# A 1×1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

server = MCPServer("fixture", instructions="Fixture rule: call echo before anything else.")
_cancelled = anyio.Event()


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


@server.tool()
def fail(why: str) -> CallToolResult:
    """Return an error result."""
    return CallToolResult(content=[TextContent(text=f"it failed: {why}")], is_error=True)


@server.tool()
def big() -> str:
    """200 KB of text."""
    return "".join(f"line {i:06d} " + "x" * 88 + "\n" for i in range(2000))


@server.tool()
def image() -> list[Any]:
    """A tiny picture."""
    return [
        TextContent(text="a picture"),
        ImageContent(data=base64.b64encode(PNG).decode(), mime_type="image/png"),
    ]


@server.tool()
def structured() -> CallToolResult:
    """Structured content beside its text."""
    return CallToolResult(
        content=[TextContent(text="see structured")], structured_content={"answer": 42}
    )


@server.tool()
async def hang() -> str:
    """Never answers; remembers being cancelled."""
    try:
        await anyio.sleep_forever()
    finally:
        _cancelled.set()
    return "unreachable"


@server.tool()
async def was_cancelled() -> str:
    """Whether `hang` has been cancelled (waits for it up to 30 s)."""
    with anyio.move_on_after(30):
        await _cancelled.wait()
    return "cancelled" if _cancelled.is_set() else "not cancelled"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def env(name: str) -> str:
    """One variable of the server's environment."""
    return os.environ.get(name, "(unset)")


@server.tool()
def client(ctx: Context) -> str:
    """The client's name and version, as it introduced itself."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    return f"{info.name} {info.version}" if info is not None else "(anonymous)"


@server.tool()
async def steps(count: int, ctx: Context) -> str:
    """Report progress once per step."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, f"step {step}")
    return f"{count} steps done"


@server.tool()
async def learn(name: str, ctx: Context) -> str:
    """Add a tool called `name` (and a prompt `<name>_prompt`); tell the client."""

    def learned() -> str:
        return f"{name} works"

    def prompt() -> str:
        return f"Use {name}."

    server.add_tool(learned, name=name, description=f"The learned tool {name}.")
    server.prompt(name=f"{name}_prompt")(prompt)
    await ctx.session.send_tool_list_changed()
    await ctx.session.send_prompt_list_changed()
    return f"learned {name}"


@server.resource("fixture://notes", mime_type="text/plain")
def notes() -> str:
    """Notes kept by the fixture."""
    return "the notes say hello"


@server.prompt()
def review(path: str, focus: str = "bugs") -> str:
    """Review one file."""
    return f"Review {path}, looking for {focus}."


@server.tool()
def crash() -> str:
    """Die in the middle of the call."""
    sys.stderr.write("fixture: about to crash on purpose\n")
    sys.stderr.flush()
    os._exit(3)


async def _serve_http(transport: str) -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    app = server.sse_app() if transport == "sse" else server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning")
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


def _serve_ignoring_eof(pid_file: str) -> None:
    """Serve stdio, then stay when the input ends (as some servers do), with a child of its own;
    both pids go to `pid_file` once the server is up."""
    helper = subprocess.Popen(["sleep", "600"])
    Path(pid_file).write_text(f"{os.getpid()} {helper.pid}\n")
    server.run("stdio")
    time.sleep(600)


if __name__ == "__main__":
    if sys.argv[1:] in (["http"], ["sse"]):
        anyio.run(_serve_http, sys.argv[1])
    elif sys.argv[1:2] == ["stdio-ignoring-eof"]:
        _serve_ignoring_eof(sys.argv[2])
    else:
        server.run("stdio")
