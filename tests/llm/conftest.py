"""Provider tests talk to a real local socket server (see `server.py`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.llm.server import LocalServer


@pytest.fixture
async def server() -> AsyncIterator[LocalServer]:
    local = LocalServer()
    await local.start()
    yield local
    await local.stop()
