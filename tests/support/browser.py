"""The person's browser in OAuth tests: approves at once, following the authorization
server's redirects back to the client's loopback server."""

from __future__ import annotations

import httpx


async def approve_in_browser(url: str) -> bool:
    async with httpx.AsyncClient(follow_redirects=True, timeout=20) as client:
        await client.get(url)
    return True
