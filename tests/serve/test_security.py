"""Who may use `tui-agent serve`: only a request with the printed token, and a websocket only
from the page's own origin. Every refusal here happens before any app process would start,
so the server runs in-process with no app behind it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from tui_agent.serve._server import web_app
from tui_agent.serve._tabs import TabLimits, Tabs

TOKEN = "Tok3n-of-the-test_abcdefgh"
KEY = "sk-a-key-that-must-stay-on-the-server"


@pytest.fixture
async def client() -> AsyncIterator[TestClient[aiohttp.web.Request, aiohttp.web.Application]]:
    # The command would fail the test if an app were ever started: nothing here may start one.
    tabs = Tabs("exit 99", {"OPENAI_API_KEY": KEY}, TabLimits())
    async with TestClient(TestServer(web_app(TOKEN, tabs))) as client:
        yield client


Client = TestClient[aiohttp.web.Request, aiohttp.web.Application]


async def test_the_page_with_the_token_is_served_and_holds_no_key(client: Client) -> None:
    response = await client.get("/", params={"token": TOKEN})
    assert response.status == 200
    page = await response.text()
    assert "textual.js" in page
    assert KEY not in page
    assert response.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize(
    "query",
    [{}, {"token": "not-the-token-at-all-nope"}, {"token": TOKEN.upper()}, {"token": TOKEN[:-1]}],
    ids=["none", "wrong", "other-case", "prefix"],
)
@pytest.mark.parametrize("path", ["/", "/static/js/textual.js", "/no-such-page"])
async def test_a_request_without_the_exact_token_gets_401_and_nothing_of_the_app(
    client: Client, path: str, query: dict[str, str]
) -> None:
    response = await client.get(path, params=query)
    assert response.status == 401
    body = await response.text()
    assert "textual" not in body and "xterm" not in body and "<html" not in body


@pytest.mark.parametrize("token", ["", "not-the-token-at-all-nope", TOKEN.lower()])
async def test_a_websocket_without_the_token_is_refused(client: Client, token: str) -> None:
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await client.ws_connect(f"/ws/{token}/tab1")
    assert refused.value.status in (401, 404)  # an empty token matches no route at all


async def test_a_websocket_from_another_origin_is_refused(client: Client) -> None:
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await client.ws_connect(f"/ws/{TOKEN}/tab1", headers={"Origin": "http://evil.example"})
    assert refused.value.status == 403


async def test_a_websocket_from_the_pages_origin_with_the_token_passes_the_checks(
    client: Client,
) -> None:
    """The same request from the page's origin gets through to the tab (whose app, here a
    command that exits at once, then ends the connection)."""
    origin = f"http://{client.server.host}:{client.server.port}"
    socket = await client.ws_connect(f"/ws/{TOKEN}/tab1", headers={"Origin": origin})
    async for _message in socket:
        pass
    assert socket.closed
