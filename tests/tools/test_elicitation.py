"""Elicitation forms read from a server's schema: fields, defaults, checks, and the answer a
front end that cannot ask gives."""

from __future__ import annotations

import pytest

from tui_agent.tools.elicitation import (
    ElicitAnswer,
    ElicitRequest,
    decline_unanswerable,
    form_fields,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "default": "Ada"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "score": {"type": "number"},
        "status": {"type": "string", "enum": ["active", "gone"], "enumNames": ["Active", "Gone"]},
        "tags": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
        "ok": {"type": "boolean", "default": False},
        "site": {"type": "string", "format": "uri"},
    },
    "required": ["age"],
}


def test_fields_follow_the_schema() -> None:
    fields = {field.name: field for field in form_fields(SCHEMA)}

    assert [f.kind for f in fields.values()] == [
        "string",
        "integer",
        "number",
        "enum",
        "multi",
        "boolean",
        "string",
    ]
    assert fields["age"].required and not fields["name"].required
    assert fields["status"].labels == ("Active", "Gone")
    assert fields["tags"].choices == ("a",)


def test_the_prefilled_form_is_the_servers_defaults() -> None:
    request = ElicitRequest("s", "m", form_fields(SCHEMA))

    assert request.defaults() == {"name": "Ada", "ok": False}


@pytest.mark.parametrize(
    ("typed", "problem"),
    [
        ({"age": ""}, ("age", "required")),
        ({"age": "3.5"}, ("age", "a whole number")),
        ({"age": "200"}, ("age", "at most 150")),
        ({"age": "1", "name": "A"}, ("name", "at least 2 characters")),
        ({"age": "1", "score": "nan"}, ("score", "a finite number")),
        ({"age": "1", "status": "other"}, ("status", "choose one of: active, gone")),
        ({"age": "1", "site": "example.com"}, ("site", "a URL such as https://example.com")),
    ],
)
def test_a_bad_value_is_named_and_nothing_is_sent(
    typed: dict[str, str], problem: tuple[str, str]
) -> None:
    request = ElicitRequest("s", "m", form_fields(SCHEMA))

    _content, problems = request.check(typed)

    assert problems == dict([problem])


def test_typed_values_become_the_schemas_types() -> None:
    request = ElicitRequest("s", "m", form_fields(SCHEMA))

    content, problems = request.check(
        {"age": " 42 ", "score": "2.5", "ok": True, "tags": ["a"], "status": "gone"}
    )

    assert problems == {}
    assert content == {"age": 42, "score": 2.5, "ok": True, "tags": ["a"], "status": "gone"}


async def test_where_nobody_can_answer_the_request_is_declined_with_a_notice() -> None:
    notices: list[str] = []
    decline = decline_unanswerable(notices.append, "this run cannot ask anyone")

    answer = await decline(ElicitRequest("crm", "Which account?"))

    assert answer == ElicitAnswer("decline")
    assert notices == [
        "MCP server \"crm\" asked for input ('Which account?'); "
        "declined: this run cannot ask anyone"
    ]


async def test_a_url_request_accepted_opens_the_page_and_sends_no_content(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcp import types

    from tui_agent.tools.mcp import _elicit

    opened: list[str] = []

    async def browser(url: str) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr(_elicit, "open_browser", browser)
    asked: list[ElicitRequest] = []

    async def accept(request: ElicitRequest) -> ElicitAnswer:
        asked.append(request)
        return ElicitAnswer("accept")

    callback = _elicit.session_callback("pay", accept)
    params = types.ElicitRequestURLParams(message="Pay", url="https://pay.example/x")

    result = await callback(None, params)

    assert (result.action, result.content) == ("accept", None)
    assert asked[0].url == "https://pay.example/x" and asked[0].fields == ()
    assert opened == ["https://pay.example/x"]
