"""The in-test MCP server (tests/support/mcp_server.py) over stdio, and over streamable HTTP
or legacy SSE on 127.0.0.1 (an ephemeral port the server prints once it listens)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import pytest

from tui_agent.tools.mcp import McpServerConfig

SERVER = str(Path(__file__).parents[2] / "support" / "mcp_server.py")


def stdio_config(name: str = "fx", **overrides: object) -> McpServerConfig:
    fields: dict[str, object] = {"command": sys.executable, "args": (SERVER, "stdio")}
    fields.update(overrides)
    return McpServerConfig(name=name, **fields)  # type: ignore[arg-type]


@contextmanager
def served(transport: Literal["http", "sse"]) -> Iterator[str]:
    """The fixture server over `transport`, and its URL once it listens."""
    process = subprocess.Popen(
        [sys.executable, SERVER, transport], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # blocks until the server listens (or dies)
        assert line.startswith("PORT "), f"the {transport} fixture server did not start: {line!r}"
        path = "mcp" if transport == "http" else "sse"
        yield f"http://127.0.0.1:{int(line.split()[1])}/{path}"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def http_url() -> Iterator[str]:
    with served("http") as url:
        yield url
