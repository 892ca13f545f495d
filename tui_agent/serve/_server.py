"""The web server of `tui-agent serve`: its routes, and who may use them.

Every request must carry the server's token (`?token=` on the page and its static files, the
path's first part on the websocket); the comparison takes constant time, and a request without
the right token gets 401 and nothing else, whatever its path. The websocket also refuses an
`Origin` other than the page's own, so a page elsewhere cannot drive the app even from inside
the user's browser. The page is ours (`page.html`); its terminal, xterm.js, and the protocol to
the app process are textual-serve's.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable
from importlib import resources
from pathlib import Path

from aiohttp import WSMsgType, web
from aiohttp.typedefs import Middleware

from tui_agent.serve._tabs import Tab, Tabs

_STATIC = Path(str(resources.files("textual_serve") / "static"))
_PAGE = (Path(__file__).parent / "page.html").read_text(encoding="utf-8")
_NO_STORE = {"Cache-Control": "no-store"}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def web_app(token: str, tabs: Tabs) -> web.Application:
    app = web.Application(middlewares=[_token_guard(token)])
    app.router.add_get("/", _page)
    app.router.add_get("/ws/{token}/{tab}", _Sockets(tabs).handle)
    app.router.add_static("/static", _STATIC)
    return app


def _token_guard(token: str) -> Middleware:
    expected = token.encode()

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        given = request.match_info.get("token") or request.query.get("token", "")
        if not hmac.compare_digest(given.encode(), expected):
            return web.Response(
                status=401,
                text="401: this needs the URL that `tui-agent serve` printed, token and all.\n",
                headers=_NO_STORE,
            )
        return await handler(request)

    return guard


async def _page(request: web.Request) -> web.Response:
    token = request.query["token"]  # the guard let it through, so it is the server's
    html = _PAGE.replace("@TOKEN@", token).replace("@STATIC@", "/static/")
    return web.Response(text=html, content_type="text/html", headers=_NO_STORE)


def _same_origin(request: web.Request) -> bool:
    """A browser always sends `Origin` on a websocket; a script without one is let in (it has
    the token)."""
    origin = request.headers.get("Origin")
    return origin is None or origin == f"{request.scheme}://{request.host}"


def _number(value: object, default: int) -> int:
    """A terminal dimension from the page: a positive integer, else `default`."""
    try:
        number = int(value) if isinstance(value, int | str) else default
    except ValueError:
        return default
    return number if number > 0 else default


class _Sockets:
    """The websocket of each tab: the terminal's bytes both ways (textual-serve's protocol)."""

    def __init__(self, tabs: Tabs) -> None:
        self.tabs = tabs

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if not _same_origin(request):
            return web.Response(status=403, text="403: the page is on another origin.\n")
        socket = web.WebSocketResponse(heartbeat=15)
        await socket.prepare(request)
        key = request.match_info["tab"]
        width = _number(request.query.get("width"), 80)
        height = _number(request.query.get("height"), 24)
        tab = self.tabs.returning(key)
        if tab is not None:
            tab.attach(socket)
        elif self.tabs.full:
            limit = self.tabs.limits.max_sessions
            await socket.send_bytes(
                f"tui-agent: all {limit} sessions of this server are in use (--max-sessions); "
                "close a tab and reload this one.\r\n".encode()
            )
            await socket.close()
            return socket
        else:
            tab = await self.tabs.open(key, socket, width, height)
        try:
            await self._relay(socket, tab)
        finally:
            await tab.detach(socket)
        return socket

    async def _relay(self, socket: web.WebSocketResponse, tab: Tab) -> None:
        async for message in socket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                kind, *payload = json.loads(message.data)
            except (ValueError, TypeError):
                continue
            if kind != "blur":
                tab.note_input()
            if kind == "stdin" and payload and isinstance(payload[0], str):
                await tab.app.send_bytes(payload[0].encode())
            elif kind == "resize" and payload and isinstance(payload[0], dict):
                size = payload[0]
                await tab.resize(_number(size.get("width"), 80), _number(size.get("height"), 24))
            elif kind == "ping" and payload:
                await socket.send_json(["pong", payload[0]])
            elif kind == "focus":
                await tab.app.focus()
            elif kind == "blur":
                await tab.app.blur()
