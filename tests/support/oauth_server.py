"""An OAuth-protected MCP server and its authorization server, in one small ASGI app, for the
client's OAuth tests.

`/mcp` answers a minimal streamable-HTTP MCP (JSON responses) only with a valid bearer token:
without one it answers 401 with `WWW-Authenticate: Bearer resource_metadata=…`; the `admin`
tool needs the `admin` scope and answers 403 `insufficient_scope` until the token has it. The
authorization server publishes its metadata, registers clients (RFC 7591), redirects
`/authorize` straight back with a code (the person always approves), and at `/token` checks
the PKCE verifier against the challenge, issues access and refresh tokens, and refreshes.
Everything it saw is kept on the `OAuthServer` object for the tests to assert on.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import socket
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route


@dataclass
class Grant:
    scope: str
    expires_in: int


@dataclass
class OAuthServer:
    base: str = ""
    expires_in: int = 3600
    refuse_registration: bool = False
    registrations: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[dict[str, str]] = field(default_factory=list)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    pkce_verified: int = 0
    seen_tokens: list[str] = field(default_factory=list)  # bearer tokens /mcp accepted
    _codes: dict[str, dict[str, str]] = field(default_factory=dict)
    _access: dict[str, Grant] = field(default_factory=dict)
    _refresh: dict[str, str] = field(default_factory=dict)  # refresh token -> scope

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"

    def grants(self, kind: str) -> list[dict[str, str]]:
        return [each for each in self.token_requests if each.get("grant_type") == kind]

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/.well-known/oauth-protected-resource/mcp", self._resource_metadata),
                Route("/.well-known/oauth-authorization-server", self._server_metadata),
                Route("/register", self._register, methods=["POST"]),
                Route("/authorize", self._authorize),
                Route("/token", self._token, methods=["POST"]),
                Route("/mcp", self._mcp, methods=["POST", "GET", "DELETE"]),
            ]
        )

    async def _resource_metadata(self, request: Request) -> Response:
        return JSONResponse(
            {
                "resource": self.mcp_url,
                "authorization_servers": [self.base],
                "scopes_supported": ["read"],  # admin is asked for by a 403 only
            }
        )

    async def _server_metadata(self, request: Request) -> Response:
        return JSONResponse(
            {
                "issuer": self.base,
                "authorization_endpoint": f"{self.base}/authorize",
                "token_endpoint": f"{self.base}/token",
                "registration_endpoint": f"{self.base}/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
            }
        )

    async def _register(self, request: Request) -> Response:
        body = await request.json()
        if self.refuse_registration:
            return _oauth_error("invalid_client_metadata", "registration is closed")
        self.registrations.append(body)
        client = {**body, "client_id": f"client-{len(self.registrations)}"}
        client["token_endpoint_auth_method"] = "none"
        return JSONResponse(client, status_code=201)

    async def _authorize(self, request: Request) -> Response:
        params = dict(request.query_params)
        self.authorizations.append(params)
        code = secrets.token_urlsafe(16)
        self._codes[code] = params
        back = {"code": code, "state": params.get("state", "")}
        return RedirectResponse(f"{params['redirect_uri']}?{urlencode(back)}", status_code=302)

    async def _token(self, request: Request) -> Response:
        form = {key: str(value) for key, value in (await request.form()).items()}
        self.token_requests.append(form)
        if form.get("grant_type") == "authorization_code":
            asked = self._codes.pop(form.get("code", ""), None)
            if asked is None:
                return _oauth_error("invalid_grant", "unknown code")
            digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
            challenge = base64.urlsafe_b64encode(digest).decode().rstrip("=")
            if challenge != asked.get("code_challenge"):
                return _oauth_error("invalid_grant", "PKCE verifier does not match")
            self.pkce_verified += 1
            return self._issue(asked.get("scope") or "read")
        if form.get("grant_type") == "refresh_token":
            scope = self._refresh.pop(form.get("refresh_token", ""), None)
            if scope is None:
                return _oauth_error("invalid_grant", "unknown refresh token")
            return self._issue(scope)
        return _oauth_error("unsupported_grant_type", form.get("grant_type", ""))

    def _issue(self, scope: str) -> Response:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self._access = {access: Grant(scope, self.expires_in)}  # older tokens stop working
        self._refresh[refresh] = scope
        return JSONResponse(
            {
                "access_token": access,
                "token_type": "Bearer",
                "expires_in": self.expires_in,
                "refresh_token": refresh,
                "scope": scope,
            }
        )

    async def _mcp(self, request: Request) -> Response:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        grant = self._access.get(token)
        if grant is None:
            metadata = f"{self.base}/.well-known/oauth-protected-resource/mcp"
            return Response(
                status_code=401,
                headers={"WWW-Authenticate": f'Bearer resource_metadata="{metadata}"'},
            )
        if request.method != "POST":
            return Response(status_code=405 if request.method == "GET" else 200)
        message = json.loads(await request.body())
        if "id" not in message:
            return Response(status_code=202)
        self.seen_tokens.append(token)
        method = message.get("method")
        admin = method == "tools/call" and message["params"]["name"] == "admin"
        if admin and "admin" not in grant.scope.split():
            challenge = 'Bearer error="insufficient_scope", scope="read admin"'
            return Response(status_code=403, headers={"WWW-Authenticate": challenge})
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": _result(message)})


def _result(message: dict[str, Any]) -> dict[str, Any]:
    method = message.get("method")
    if method == "initialize":
        return {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "oauth-fixture", "version": "1"},
        }
    if method == "tools/list":
        schema = {"type": "object", "properties": {}}
        return {
            "tools": [
                {"name": "whoami", "description": "The token's owner", "inputSchema": schema},
                {"name": "admin", "description": "Needs the admin scope", "inputSchema": schema},
            ]
        }
    if method == "tools/call":
        return {"content": [{"type": "text", "text": f"ran {message['params']['name']}"}]}
    return {}


def _oauth_error(code: str, description: str) -> Response:
    return JSONResponse({"error": code, "error_description": description}, status_code=400)


async def serve(state: OAuthServer) -> tuple[uvicorn.Server, asyncio.Task[None]]:
    """Serve `state` on 127.0.0.1 (an ephemeral port) inside the running event loop."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    state.base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(state.app(), log_level="warning", lifespan="off"))
    server.config.load()
    server.lifespan = server.config.lifespan_class(server.config)
    await server.startup(sockets=[sock])  # listening once this returns

    async def run() -> None:
        await server.main_loop()
        await server.shutdown(sockets=[sock])

    return server, asyncio.create_task(run())
