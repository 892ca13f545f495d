"""`@modelcontextprotocol/server-everything`, the MCP project's reference server (pinned in
tests/node/mcp-servers), over stdio or served over HTTP on 127.0.0.1 (streamable HTTP at
`/mcp`, the legacy SSE transport at `/sse`).

`everything_js()` is the script to run with node (the test is skipped where npm is missing);
`served(transport)` starts it on a free port and yields the URL once it listens.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from tests.support.node import node_packages

PACKAGE = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"


def everything_js() -> Path:
    return node_packages("mcp-servers") / PACKAGE


@contextmanager
def served(transport: Literal["http", "sse"]) -> Iterator[str]:
    with socket.socket() as probe:  # a free port; the server binds it by number
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    mode = "streamableHttp" if transport == "http" else "sse"
    script = everything_js()
    process = subprocess.Popen(
        [shutil.which("node") or "node", str(script), mode],
        env={**os.environ, "PORT": str(port)},
        stderr=subprocess.PIPE,
        text=True,
    )
    listening = threading.Event()

    def drain() -> None:  # read all of it, or a full pipe would stop the server
        assert process.stderr is not None
        for line in process.stderr:
            if str(port) in line:
                listening.set()
        listening.set()  # it died: the wait below ends and the check says so

    threading.Thread(target=drain, daemon=True).start()
    try:
        listening.wait(timeout=60)
        assert process.poll() is None, f"server-everything ({mode}) did not start"
        yield f"http://127.0.0.1:{port}/{'mcp' if transport == 'http' else 'sse'}"
    finally:
        process.terminate()
        process.wait(timeout=10)
