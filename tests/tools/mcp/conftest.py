"""The in-test MCP server (tests/support/mcp_server.py) over stdio, and over streamable HTTP
on 127.0.0.1 (an ephemeral port the server prints once it listens)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tui_agent.tools.mcp import McpServerConfig

SERVER = str(Path(__file__).parents[2] / "support" / "mcp_server.py")


def stdio_config(name: str = "fx", **overrides: object) -> McpServerConfig:
    fields: dict[str, object] = {"command": sys.executable, "args": (SERVER, "stdio")}
    fields.update(overrides)
    return McpServerConfig(name=name, **fields)  # type: ignore[arg-type]


@pytest.fixture
def http_url() -> Iterator[str]:
    process = subprocess.Popen([sys.executable, SERVER, "http"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # blocks until the server listens (or dies)
        assert line.startswith("PORT "), f"the HTTP fixture server did not start: {line!r}"
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)
