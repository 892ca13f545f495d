"""A small MCP server for the client's fault tests, built on the SDK's MCPServer (FastMCP's
successor in mcp 2): `python mcp_server.py stdio` or `python mcp_server.py http` (streamable
HTTP on 127.0.0.1, an ephemeral port, printed as `PORT <n>` on stdout once it listens).

Tools: `echo` and `env` (read-only), `fail` (an error result), `big` (200 KB of text),
`image` (a PNG), `structured` (structuredContent), `hang` (never returns; a cancel is remembered),
`was_cancelled` (waits until `hang` saw its cancellation), `crash` (writes to stderr and dies).
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
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ImageContent, TextContent, ToolAnnotations

# A 1×1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

server = MCPServer("fixture")
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
def crash() -> str:
    """Die in the middle of the call."""
    sys.stderr.write("fixture: about to crash on purpose\n")
    sys.stderr.flush()
    os._exit(3)


async def _serve_http() -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    app = server.streamable_http_app()
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
    if sys.argv[1:] == ["http"]:
        anyio.run(_serve_http)
    elif sys.argv[1:2] == ["stdio-ignoring-eof"]:
        _serve_ignoring_eof(sys.argv[2])
    else:
        server.run("stdio")
