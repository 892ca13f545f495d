"""OAuth for HTTP MCP servers, against a local authorization server written for the test
(tests/support/oauth_server.py): discovery, registration, PKCE, refresh, a token that expires
mid-session, step-up on 403, where the tokens live, and that they are never shown.

The person's browser is `approve_in_browser` (it follows the redirects back to our loopback
server); a test that must not open it counts the calls. Token expiry runs on a clock the test
moves (the SDK's and ours), never on the wall clock.
"""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import approve_in_browser
from tests.support.oauth_server import OAuthServer, serve
from tests.tools.mcp.test_mcp_servers import _call
from tests.ui.real_loop import scripted_loop
from tui_agent.session._mcp import OAUTH_DIR
from tui_agent.tools.mcp import McpOAuth, McpServerConfig, McpServers


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def time(self) -> float:
        return self.now


class Browser:
    def __init__(self) -> None:
        self.opened: list[str] = []

    async def __call__(self, url: str) -> bool:
        self.opened.append(url)
        return await approve_in_browser(url)


@pytest.fixture
async def oauth() -> AsyncIterator[OAuthServer]:
    state = OAuthServer()
    server, task = await serve(state)
    yield state
    server.should_exit = True
    await task


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    for module in ("mcp.client.auth.oauth2", "mcp.shared.auth_utils", "tui_agent.tools.mcp._auth"):
        monkeypatch.setattr(f"{module}.time", clock)
    return clock


class Harness:
    def __init__(self, oauth: OAuthServer, store: Path) -> None:
        self.oauth = oauth
        self.store = store
        self.browser = Browser()
        self.notices: list[str] = []
        self.made: list[McpServers] = []

    async def servers(self, **oauth_settings: Any) -> McpServers:
        config = McpServerConfig(
            name="fx",
            transport="http",
            url=self.oauth.mcp_url,
            oauth=McpOAuth(store=str(self.store), **oauth_settings),
        )
        servers = McpServers(
            [config],
            on_notice=lambda level, text: self.notices.append(text),
            browser=self.browser,
        )
        self.made.append(servers)
        servers.start()
        await servers.wait_started()
        return servers


@pytest.fixture
async def harness(oauth: OAuthServer, tmp_path: Path, clock: Clock) -> AsyncIterator[Harness]:
    made = Harness(oauth, tmp_path / "mcp-auth")
    yield made
    for servers in made.made:
        await servers.aclose()


async def _logged_in(harness: Harness, **oauth_settings: Any) -> McpServers:
    servers = await harness.servers(**oauth_settings)
    assert await servers.login("fx") is None
    return servers


async def test_a_server_that_needs_a_login_says_so_and_opens_no_browser(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    servers = await harness.servers()

    status = servers.statuses()[0]
    assert status.state == "login"
    assert status.auth == "not logged in"
    assert "/mcp login fx" in (status.error or "")
    assert any("tui-agent mcp login fx" in notice for notice in harness.notices)
    assert harness.browser.opened == []
    assert not [r for r in caplog.records if r.exc_info]  # said in words, not a traceback


async def test_login_discovers_registers_and_proves_pkce(harness: Harness, tmp_path: Path) -> None:
    servers = await _logged_in(harness)

    oauth = harness.oauth
    assert [r["client_name"] for r in oauth.registrations] == ["tui-agent"]
    (asked,) = oauth.authorizations
    assert asked["code_challenge_method"] == "S256"
    assert asked["resource"] == oauth.mcp_url
    assert asked["redirect_uri"].startswith("http://127.0.0.1:")
    assert oauth.pkce_verified == 1
    assert servers.statuses()[0].state == "ready"
    assert servers.statuses()[0].auth == "logged in (token valid 60 min more)"
    assert any(oauth.base in notice for notice in harness.notices)  # the URL to paste
    result = await _call(servers, "mcp__fx__whoami", tmp_path)
    assert result.output == "ran whoami"


async def test_tokens_are_kept_private_and_never_shown(harness: Harness) -> None:
    servers = await _logged_in(harness)

    (file,) = harness.store.iterdir()
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    token = harness.oauth.seen_tokens[-1]
    assert token in file.read_text()
    shown = [*harness.notices, repr(servers.statuses())]
    assert not any(token in text for text in shown)


async def test_stored_tokens_connect_a_restarted_client_without_a_login(
    harness: Harness,
) -> None:
    await _logged_in(harness)
    opened = len(harness.browser.opened)

    again = await harness.servers()

    assert again.statuses()[0].state == "ready"
    assert len(harness.browser.opened) == opened
    assert len(harness.oauth.registrations) == 1  # the registered client is reused


async def test_a_token_that_expires_mid_session_is_refreshed_without_the_browser(
    harness: Harness, clock: Clock, tmp_path: Path
) -> None:
    servers = await _logged_in(harness)
    first = harness.oauth.seen_tokens[-1]

    clock.now += harness.oauth.expires_in + 1
    result = await _call(servers, "mcp__fx__whoami", tmp_path)

    assert result.output == "ran whoami"
    assert len(harness.oauth.grants("refresh_token")) == 1
    assert harness.oauth.seen_tokens[-1] != first
    assert len(harness.browser.opened) == 1


async def test_an_expired_stored_token_is_refreshed_when_the_client_restarts(
    harness: Harness, clock: Clock
) -> None:
    await _logged_in(harness)
    clock.now += harness.oauth.expires_in + 1

    again = await harness.servers()

    assert again.statuses()[0].state == "ready"
    assert len(harness.oauth.grants("refresh_token")) == 1
    assert len(harness.browser.opened) == 1


async def test_403_insufficient_scope_asks_again_with_the_wider_scope(
    harness: Harness, tmp_path: Path
) -> None:
    servers = await _logged_in(harness)

    result = await _call(servers, "mcp__fx__admin", tmp_path)

    assert result.output == "ran admin"
    scopes = [set(asked.get("scope", "").split()) for asked in harness.oauth.authorizations]
    assert "admin" not in scopes[0]
    assert {"read", "admin"} <= scopes[-1]


async def test_logout_forgets_the_tokens(harness: Harness) -> None:
    servers = await _logged_in(harness)

    assert await servers.logout("fx") is None

    status = servers.statuses()[0]
    assert (status.state, status.auth) == ("login", "not logged in")
    again = await harness.servers()
    assert again.statuses()[0].state == "login"


async def test_a_pre_registered_client_does_not_register(harness: Harness) -> None:
    await _logged_in(harness, client_id="given-id")

    assert harness.oauth.registrations == []
    assert harness.oauth.authorizations[0]["client_id"] == "given-id"


async def test_a_step_up_nobody_can_answer_fails_the_call_and_says_to_log_in(
    harness: Harness, tmp_path: Path
) -> None:
    await _logged_in(harness)
    restarted = await harness.servers()  # a new run: it has tokens but may not ask

    result = await _call(restarted, "mcp__fx__admin", tmp_path)

    assert result.is_error
    assert "login" in (result.output or "")
    assert len(harness.browser.opened) == 1


async def test_a_failed_oauth_login_says_the_server_needs_authorization(
    harness: Harness,
) -> None:
    harness.oauth.refuse_registration = True

    servers = await harness.servers()

    status = servers.statuses()[0]
    assert status.state == "failed"
    assert "needs authorization (401) and the OAuth login failed" in (status.error or "")
    assert "registration is closed" in (status.error or "")


@pytest.fixture
def session_home(oauth: OAuthServer, tmp_path: Path) -> Path:
    """`TUI_AGENT_HOME` with the server in config.toml, and an empty workspace beside it."""
    home = Path(os.environ["TUI_AGENT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f'[mcp_servers.fx]\nurl = "{oauth.mcp_url}"\n')
    (tmp_path / "ws").mkdir()
    return home


async def test_a_session_that_uses_the_server_logs_no_token(
    oauth: OAuthServer, session_home: Path, tmp_path: Path, clock: Clock
) -> None:
    login = Harness(oauth, session_home / OAUTH_DIR)  # where a session looks for the tokens
    await _logged_in(login)
    for servers in login.made:
        await servers.aclose()
    call = {"name": "mcp__fx__whoami", "arguments": {}}
    steps = [{"tool_calls": [call]}, {"text": "done"}]
    loop = await scripted_loop(steps, workspace=tmp_path / "ws")
    try:
        await loop.mcp_started()
        await (await loop.submit("who am I?")).result()
    finally:
        await loop.close()

    (log,) = (session_home / "sessions").glob("*/events.jsonl")
    text = log.read_text()
    assert "ran whoami" in text  # the call went through, with the stored token
    assert oauth.seen_tokens and not any(token in text for token in oauth.seen_tokens)
