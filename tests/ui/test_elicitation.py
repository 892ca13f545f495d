"""An MCP server's request for input in the app: the form, its checks, its three answers, and
`/mcp login|logout`."""

from __future__ import annotations

import asyncio
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Button, Input

from tests.ui.fake_loop import FakeLoop
from tests.ui.real_loop import until
from tests.ui.test_mcp import markers
from tui_agent.loop.elicitation import ElicitAnswer, ElicitRequest
from tui_agent.loop.events import McpServerInfo
from tui_agent.tools.elicitation import form_fields
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.elicitation_screen import ElicitationForm

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "default": "Ada"},
        "email": {"type": "string", "title": "Email", "format": "email"},
        "age": {"type": "integer", "title": "Age", "minimum": 0, "description": "In years"},
        "plan": {
            "type": "string",
            "title": "Plan",
            "oneOf": [{"const": "free", "title": "Free"}, {"const": "pro", "title": "Pro"}],
            "default": "free",
        },
        "subscribe": {"type": "boolean", "title": "Send me news", "default": True},
    },
    "required": ["email", "age"],
}
REQUEST = ElicitRequest("crm", "Who should the account be for?", form_fields(SCHEMA))


async def _asking(app: TuiAgentApp, pilot: Pilot[None]) -> asyncio.Task[ElicitAnswer]:
    loop = app.loop
    assert isinstance(loop, FakeLoop) and loop.elicit is not None
    asked = asyncio.ensure_future(loop.elicit(REQUEST))
    await until(pilot, lambda: isinstance(app.screen, ElicitationForm))
    await until(pilot, lambda: app.focused is not None and app.focused.screen is app.screen)
    return asked


async def test_accept_checks_the_fields_and_sends_typed_values() -> None:
    app = TuiAgentApp(FakeLoop())
    async with app.run_test(size=(100, 40)) as pilot:
        asked = await _asking(app, pilot)
        app.screen.query_one("#field-age", Input).value = "-3"
        app.screen.query_one("#accept", Button).press()
        await pilot.pause()
        assert not asked.done()
        errors = {w.id: str(w.render()) for w in app.screen.query(".field-error")}
        assert errors["error-email"] == "required"
        assert errors["error-age"] == "at least 0"

        app.screen.query_one("#field-email", Input).value = "ada@example.com"
        app.screen.query_one("#field-age", Input).value = "36"
        app.screen.query_one("#accept", Button).press()
        answer = await asked

    assert answer == ElicitAnswer(
        "accept",
        {"name": "Ada", "email": "ada@example.com", "age": 36, "plan": "free", "subscribe": True},
    )


async def test_decline_and_escape_send_no_data() -> None:
    app = TuiAgentApp(FakeLoop())
    async with app.run_test(size=(100, 40)) as pilot:
        asked = await _asking(app, pilot)
        app.screen.query_one("#decline", Button).press()
        assert await asked == ElicitAnswer("decline")
        await until(pilot, lambda: not isinstance(app.screen, ElicitationForm))

        asked = await _asking(app, pilot)
        await pilot.press("escape")
        assert await asked == ElicitAnswer("cancel")


def test_the_form_looks_as_reviewed(snap_compare: Any) -> None:
    app = TuiAgentApp(FakeLoop())

    async def run_before(pilot: Pilot[None]) -> None:
        await _asking(app, pilot)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 40), run_before=run_before)


async def test_slash_mcp_login_and_logout_ask_the_loop_and_show_the_auth_state() -> None:
    server = McpServerInfo(
        name="docs",
        source="config",
        state="login",
        command="https://example.com/mcp",
        error="needs a login: /mcp login docs in the app, or tui-agent mcp login docs",
        auth="not logged in",
    )
    loop = FakeLoop(mcp=(server,))
    app = TuiAgentApp(loop)
    async with app.run_test(size=(120, 36)) as pilot:
        app.run_slash("mcp", "")
        await until(pilot, lambda: "MCP servers" in markers(app)[-1])
        assert "● docs  needs a login" in markers(app)[-1]
        assert "    OAuth: not logged in" in markers(app)[-1]
        app.run_slash("mcp", "login docs")
        await until(pilot, lambda: ("login_mcp", "docs") in loop.calls)
        app.run_slash("mcp", "logout docs")
        await until(pilot, lambda: ("logout_mcp", "docs") in loop.calls)


async def test_tab_moves_between_fields_and_enter_sends_the_form() -> None:
    app = TuiAgentApp(FakeLoop())
    async with app.run_test(size=(100, 40)) as pilot:
        asked = await _asking(app, pilot)
        assert app.focused is app.screen.query_one("#field-name")
        await pilot.press("tab")
        await pilot.press(*"ada@example.com")
        await pilot.press("tab", *"7", "enter")
        answer = await asked

    assert answer.action == "accept"
    assert (answer.content["email"], answer.content["age"]) == ("ada@example.com", 7)
