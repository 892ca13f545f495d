"""OAuth 2.1 for HTTP MCP servers, as the MCP authorization spec describes it.

The SDK's `OAuthClientProvider` (an httpx Auth) does the protocol: protected-resource and
authorization-server metadata discovery, dynamic registration or a pre-registered / URL-named
client, PKCE, the `resource` parameter and scope choice, refresh, and step-up on a 403
`insufficient_scope`. What it leaves to us is here: the token file (`TokenFile`), and how a
login reaches the person (`Authorizer`): the browser opened on the authorize URL, the URL also
given as a notice to paste where no browser opens, and a loopback server on 127.0.0.1 that
receives the redirect (`_loopback`). A connection that is not allowed to ask (start-up, a
headless run) raises `LoginRequired` instead, so nothing ever waits on a browser unasked.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import socket
import sys
import time
import warnings
import webbrowser
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from tui_agent.tools.mcp._config import McpOAuth, McpServerConfig
from tui_agent.tools.mcp._loopback import Loopback

if TYPE_CHECKING:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

LOGIN_TIMEOUT_S = 300.0  # how long a login waits for the browser to come back
CLIENT_NAME = "tui-agent"
OpenBrowser = Callable[[str], Awaitable[bool]]


class LoginRequired(Exception):
    """The server needs a login, and this connection may not ask for one."""


def _not_a_needed_login(record: logging.LogRecord) -> bool:
    """Keeps the SDK's "OAuth flow error" traceback out of the log (and a headless run's
    stderr) when the error is only that a login is needed: that is said once, in words."""
    error = record.exc_info[1] if record.exc_info else None
    return error is None or not needs_login(error)


logging.getLogger("mcp.client.auth.oauth2").addFilter(_not_a_needed_login)


def needs_login(error: BaseException) -> bool:
    """Whether `LoginRequired` is somewhere in `error` (the SDK wraps it in groups and causes)."""
    return _find(error, LoginRequired) is not None


def oauth_failure(error: BaseException) -> str | None:
    """Why the OAuth flow failed, when that is what `error` comes from (a 401 the server's
    metadata, registration or token endpoint could not get past)."""
    from mcp.client.auth.exceptions import OAuthFlowError

    found = _find(error, OAuthFlowError)
    if found is None:
        return None
    return str(found) or type(found).__name__


def _find(error: BaseException, kind: type[BaseException]) -> BaseException | None:
    seen: set[int] = set()
    pending = [error]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind):
            return current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None


async def open_browser(url: str) -> bool:
    """The system browser on `url`; False where there is none (ssh, a container)."""
    graphical = sys.platform in ("darwin", "win32") or any(
        os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY")
    )
    if not graphical:
        # Without a display `webbrowser` falls back to text browsers (lynx, w3m), which would
        # take over the terminal the app draws on: the URL notice is the way then.
        return False
    return await asyncio.to_thread(webbrowser.open, url)


class TokenFile:
    """One server's tokens and client registration, in a JSON file only its owner can read.

    Implements the SDK's `TokenStorage`. The file is named by a hash of the server URL, so two
    servers (or one server under two names) never share or overwrite each other's tokens.
    `expires_at` is kept beside the token so a restarted app knows an old token has expired
    and refreshes it instead of sending it first.
    """

    def __init__(self, oauth: McpOAuth, server_url: str) -> None:
        digest = hashlib.sha256(server_url.encode()).hexdigest()[:24]
        self.path = Path(oauth.store) / f"{digest}.json"
        self._url = server_url
        self._configured = oauth

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) and data.get("server_url") == self._url else {}

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.path.with_suffix(".tmp")
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        # Created with mode 0600 from the start: the token is never readable by others.
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump({**data, "server_url": self._url}, file)
        os.replace(temporary, self.path)

    def _update(self, **changes: Any) -> None:
        self._write({**self._read(), **changes})

    def expires_at(self) -> float | None:
        value = self._read().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def has_tokens(self) -> bool:
        return bool(self._read().get("tokens"))

    def clear(self) -> bool:
        """Forget the tokens (a registered client is kept: the next login reuses it)."""
        data = self._read()
        if not data.get("tokens"):
            return False
        data.pop("tokens", None)
        data.pop("expires_at", None)
        self._write(data)
        return True

    def registered_redirect(self) -> str | None:
        client = self._read().get("client_info") or {}
        uris = client.get("redirect_uris") or []
        return str(uris[0]) if uris else None

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        tokens = self._read().get("tokens")
        return OAuthToken.model_validate(tokens) if tokens else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        self._update(tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        stored = self._read().get("client_info")
        if stored:
            return OAuthClientInformationFull.model_validate(stored)
        configured = self._configured
        if configured.client_id is None:
            return None
        # A pre-registered client: secret-based clients authenticate with HTTP Basic (the
        # method RFC 6749 requires servers to support), public ones send no secret.
        return OAuthClientInformationFull(
            client_id=configured.client_id,
            client_secret=configured.client_secret,
            redirect_uris=None,
            token_endpoint_auth_method=(
                "client_secret_basic" if configured.client_secret else "none"
            ),
        )

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._update(client_info=client_info.model_dump(mode="json", exclude_none=True))


class Authorizer:
    """One HTTP server's OAuth: its token file, the SDK provider, and how a login is done.

    `interactive` says whether a login may be started now (the person asked for one, or the
    app runs and the server wants more scope mid-session); otherwise a needed login raises
    `LoginRequired`. `on_url` hears the authorize URL (shown to paste); `browser` opens it.
    """

    def __init__(
        self,
        config: McpServerConfig,
        oauth: McpOAuth,
        *,
        on_url: Callable[[str], None] = lambda url: None,
        browser: OpenBrowser = open_browser,
    ) -> None:
        self.config = config
        self.tokens = TokenFile(oauth, config.url)
        self.interactive = False
        # A login was needed when none could be asked for: the connection failed for that.
        self.wanted_login = False
        self._oauth = oauth
        self._on_url = on_url
        self._browser = browser
        self._loopback: Loopback | None = None
        self._redirect_to = ""  # chosen when the provider is made; the login must use it

    def state(self) -> str:
        """A few words for `/mcp`: logged in or not, and until when."""
        if not self.tokens.has_tokens():
            return "not logged in"
        expires = self.tokens.expires_at()
        if expires is None:
            return "logged in"
        left = expires - time.time()
        if left <= 0:
            return "logged in (token expired; refreshed on the next request)"
        return f"logged in (token valid {_duration(left)} more)"

    def provider(self) -> OAuthClientProvider:
        if self._oauth.grant == "client_credentials":
            return self._machine_provider()
        from mcp.client.auth import OAuthClientProvider
        from mcp.shared.auth import OAuthClientMetadata
        from pydantic import AnyUrl

        tokens = self.tokens
        self._redirect_to = self._redirect_uri()

        class Provider(OAuthClientProvider):
            async def _initialize(self) -> None:
                # The SDK loads a stored token as if it never expired; with its expiry known
                # an expired one is refreshed before it is sent.
                await super()._initialize()
                self.context.token_expiry_time = tokens.expires_at()

        metadata = OAuthClientMetadata(
            client_name=CLIENT_NAME,
            redirect_uris=[AnyUrl(self._redirect_to)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=self._oauth.scope,
        )
        return Provider(
            server_url=self.config.url,
            client_metadata=metadata,
            storage=tokens,
            redirect_handler=self._redirect,
            callback_handler=self._callback,
            client_metadata_url=self._oauth.client_metadata_url,
        )

    def _machine_provider(self) -> OAuthClientProvider:
        """Client credentials: no person, no browser; the SDK's providers do the grant."""
        from mcp.client.auth.extensions.client_credentials import (
            ClientCredentialsOAuthProvider,
            PrivateKeyJWTOAuthProvider,
            SignedJWTParameters,
        )

        oauth = self._oauth
        client_id = oauth.client_id or ""
        # Without `issuer` the SDK warns (on stderr, under the app's screen) at every connect;
        # the README says to set it, and the server's metadata decides where the grant goes.
        warnings.filterwarnings("ignore", message="Omitting `issuer` is deprecated")
        if oauth.private_key_file:
            signer = SignedJWTParameters(
                issuer=client_id,
                subject=client_id,
                signing_key=Path(oauth.private_key_file).read_text(encoding="utf-8"),
                signing_algorithm=oauth.signing_algorithm,
            )
            return PrivateKeyJWTOAuthProvider(
                server_url=self.config.url,
                storage=self.tokens,
                client_id=client_id,
                assertion_provider=signer.create_assertion_provider(),
                scope=oauth.scope,
                issuer=oauth.issuer,
            )
        return ClientCredentialsOAuthProvider(
            server_url=self.config.url,
            storage=self.tokens,
            client_id=client_id,
            client_secret=oauth.client_secret or "",
            scope=oauth.scope,
            issuer=oauth.issuer,
        )

    def _redirect_uri(self) -> str:
        """The loopback address the browser comes back to: a configured port, else the one
        this client registered with, else a free one."""
        if self._oauth.callback_port:
            return f"http://127.0.0.1:{self._oauth.callback_port}/callback"
        registered = self.tokens.registered_redirect()
        if registered and urlparse(registered).hostname in ("127.0.0.1", "localhost"):
            return registered
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        return f"http://127.0.0.1:{port}/callback"

    async def _redirect(self, url: str) -> None:
        self.wanted_login = not self.interactive
        if not self.interactive:
            raise LoginRequired(f'MCP server "{self.config.name}" needs a login')
        redirect = urlparse(self._redirect_to)
        self._loopback = await Loopback.start(redirect.hostname or "127.0.0.1", redirect.port)
        self._on_url(url)
        await self._browser(url)

    async def _callback(self) -> Any:
        from mcp.shared.auth import AuthorizationCodeResult

        loopback = self._loopback
        if loopback is None:
            raise LoginRequired("the login was not started")
        try:
            async with asyncio.timeout(LOGIN_TIMEOUT_S):
                query = await loopback.result()
        except TimeoutError:
            raise LoginRequired(
                f"no answer from the browser within {LOGIN_TIMEOUT_S:g} s"
            ) from None
        finally:
            self._loopback = None
            await loopback.close()
        if "error" in query:
            detail = query.get("error_description") or query["error"]
            raise LoginRequired(f"the authorization server refused the login: {detail}")
        return AuthorizationCodeResult(
            code=query.get("code", ""), state=query.get("state"), iss=query.get("iss")
        )


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"
