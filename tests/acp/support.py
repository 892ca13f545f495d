"""What the ACP tests share: a recording client, scripts for the scripted provider, and
`tui-agent acp` started as a separate process driven by the ACP package's client connection."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp import schema as acp


class RecordingClient:
    """An ACP client that keeps every update and answers permission requests as told."""

    def __init__(self, answer: str = "allow_once") -> None:
        self.answer = answer
        self.updates: list[Any] = []
        self.permissions: list[acp.RequestPermissionRequest] = []
        self.changed = asyncio.Condition()

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        async with self.changed:
            self.updates.append(update)
            self.changed.notify_all()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> acp.RequestPermissionResponse:
        self.permissions.append(
            acp.RequestPermissionRequest(
                session_id=session_id, tool_call=tool_call, options=options
            )
        )
        return acp.RequestPermissionResponse(
            outcome=acp.AllowedOutcome(outcome="selected", option_id=self.answer)
        )

    async def wait_for(self, seen: Callable[[Any], bool]) -> Any:
        async with self.changed:
            await self.changed.wait_for(lambda: any(seen(u) for u in self.updates))
        return next(u for u in self.updates if seen(u))

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))


def script(tmp_path: Path, steps: list[dict[str, Any]]) -> str:
    path = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
    path.write_text(json.dumps({"steps": steps}))
    return str(path)


@asynccontextmanager
async def agent(
    client: RecordingClient, *args: str, capabilities: acp.ClientCapabilities | None = None
) -> AsyncIterator[tuple[Any, asyncio.subprocess.Process]]:
    async with spawn_agent_process(
        client, sys.executable, "-m", "tui_agent", "acp", *args, env=dict(os.environ)
    ) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
        yield conn, process
