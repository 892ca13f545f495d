"""Request building: golden JSON bodies for both protocols, the headers, and key hygiene."""

from __future__ import annotations

from typing import Any

from tests.llm.helpers import collect
from tests.llm.server import LocalServer, Reply
from tui_agent.llm import ProviderSettings, make_provider
from tui_agent.llm._anthropic import build_anthropic_body
from tui_agent.llm._openai import build_openai_body
from tui_agent.vocab import (
    ImagePart,
    LLMErrorKind,
    LLMRequest,
    Message,
    TextPart,
    ThinkPart,
    ToolCall,
    ToolSpec,
    system_message,
    user_message,
)

FAKE_KEY = "sk-test-RECOGNISABLE-0123456789abcdef"

READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def _history() -> LLMRequest:
    assistant = Message(
        role="assistant",
        content=(
            ThinkPart(think="Look first.", signature="sig-1"),
            TextPart(text="Reading both."),
        ),
        tool_calls=(
            ToolCall(id="call_a", name="read_file", arguments='{"path": "a.txt"}'),
            ToolCall(id="call_b", name="read_file", arguments='{"path": "b.txt"}'),
        ),
    )
    return LLMRequest(
        model="model-x",
        system="You are careful.",
        messages=(
            user_message("Read a and b."),
            assistant,
            Message(role="tool", tool_call_id="call_a", content=(TextPart(text="alpha"),)),
            Message(
                role="tool",
                tool_call_id="call_b",
                content=(TextPart(text="no such file"),),
                is_error=True,
            ),
            user_message("Thanks."),
        ),
        tools=(READ_FILE,),
        max_tokens=1000,
        temperature=0.2,
    )


def test_openai_body_from_a_full_history() -> None:
    settings = ProviderSettings(
        kind="openai", model="model-x", echo_reasoning=True, base_url="http://localhost:8000/v1"
    )
    assert build_openai_body(_history(), settings) == {
        "model": "model-x",
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 1000,
        "temperature": 0.2,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "read_file",
                    "description": "Read a file.",
                    "parameters": READ_FILE.parameters,
                },
            }
        ],
        "messages": [
            {"role": "system", "content": "You are careful."},
            {"role": "user", "content": "Read a and b."},
            {
                "role": "assistant",
                "content": "Reading both.",
                "reasoning_content": "Look first.",
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
                    },
                    {
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "b.txt"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": "alpha"},
            {"role": "tool", "tool_call_id": "call_b", "content": "no such file"},
            {"role": "user", "content": "Thanks."},
        ],
    }


def _with_image() -> LLMRequest:
    shot = ImagePart(media_type="image/png", data="iVBORw0KGgo=")
    prompt = Message(role="user", content=(TextPart(text="What is wrong here?"), shot))
    return LLMRequest(model="model-x", messages=(prompt,), max_tokens=100)


def test_openai_body_carries_a_prompts_image_as_a_data_url_part() -> None:
    settings = ProviderSettings(kind="openai", model="model-x", base_url="http://h/v1")
    (message,) = build_openai_body(_with_image(), settings)["messages"]
    assert message == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is wrong here?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ],
    }


def test_anthropic_body_carries_a_prompts_image_as_a_base64_image_block() -> None:
    settings = ProviderSettings(kind="anthropic", model="model-x", prompt_cache=False)
    (message,) = build_anthropic_body(_with_image(), settings)["messages"]
    assert message == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is wrong here?"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
            },
        ],
    }


def test_openai_official_api_gets_max_completion_tokens() -> None:
    settings = ProviderSettings(kind="openai", model="gpt-5", max_tokens=4096)
    request = LLMRequest(model="gpt-5", messages=(user_message("hi"),))
    body = build_openai_body(request, settings)
    assert body["max_completion_tokens"] == 4096
    assert "max_tokens" not in body


def test_openai_body_without_usage_option_or_reasoning_echo() -> None:
    settings = ProviderSettings(kind="openai", model="model-x", include_usage=False)
    body = build_openai_body(_history(), settings)
    assert "stream_options" not in body
    assert all("reasoning_content" not in m for m in body["messages"])


def test_anthropic_body_from_a_full_history() -> None:
    # Cache breakpoints have their own tests (test_llm_prompt_cache.py); this is the shape.
    settings = ProviderSettings(kind="anthropic", model="model-x", prompt_cache=False)
    assert build_anthropic_body(_history(), settings) == {
        "model": "model-x",
        "max_tokens": 1000,
        "stream": True,
        "temperature": 0.2,
        "system": "You are careful.",
        "tools": [
            {
                "name": "read_file",
                "description": "Read a file.",
                "input_schema": READ_FILE.parameters,
            }
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Read a and b."}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Look first.", "signature": "sig-1"},
                    {"type": "text", "text": "Reading both."},
                    {
                        "type": "tool_use",
                        "id": "call_a",
                        "name": "read_file",
                        "input": {"path": "a.txt"},
                    },
                    {
                        "type": "tool_use",
                        "id": "call_b",
                        "name": "read_file",
                        "input": {"path": "b.txt"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "call_a", "content": "alpha"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_b",
                        "content": "no such file",
                        "is_error": True,
                    },
                    {"type": "text", "text": "Thanks."},
                ],
            },
        ],
    }


def test_anthropic_body_echoes_redacted_thinking_and_drops_unsigned_thinking() -> None:
    assistant = Message(
        role="assistant",
        content=(
            ThinkPart(think="", encrypted="opaque-data"),
            ThinkPart(think="from another provider"),
            TextPart(text="Hi."),
        ),
    )
    request = LLMRequest(
        model="m", messages=(system_message("Extra rules."), user_message("Hi"), assistant)
    )
    settings = ProviderSettings(kind="anthropic", model="m", prompt_cache=False)
    body = build_anthropic_body(request, settings)
    assert body["max_tokens"] == 8192
    assert body["system"] == "Extra rules."
    assert body["messages"][1]["content"] == [
        {"type": "redacted_thinking", "data": "opaque-data"},
        {"type": "text", "text": "Hi."},
    ]


def _ok(kind: str) -> Reply:
    if kind == "openai":
        body = (
            b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"ok"},'
            b'"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
        )
    else:
        body = (
            b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
            b'"content_block":{"type":"text","text":"ok"}}\n\n'
            b'event: message_delta\ndata: {"type":"message_delta","delta":'
            b'{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}\n\n'
            b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
        )
    return Reply(headers={"content-type": "text/event-stream"}, pieces=[body])


async def _send(server: LocalServer, kind: str, key: str | None) -> dict[str, Any]:
    server.replies.append(_ok(kind))
    base = f"{server.url}/v1" if kind == "openai" else server.url
    provider = make_provider(
        ProviderSettings(kind=kind, model="m", base_url=base, api_key=key)  # type: ignore[arg-type]
    )
    try:
        out = await collect(provider.stream(LLMRequest(model="m", messages=(user_message("x"),))))
    finally:
        await provider.aclose()
    assert out.text == "ok"
    recorded = server.requests[-1]
    return {"path": recorded.path, "headers": recorded.headers, "body": recorded.json()}


async def test_openai_sends_bearer_only_with_a_key(server: LocalServer) -> None:
    with_key = await _send(server, "openai", FAKE_KEY)
    assert with_key["path"] == "/v1/chat/completions"
    assert with_key["headers"]["authorization"] == f"Bearer {FAKE_KEY}"
    without = await _send(server, "openai", None)
    assert "authorization" not in without["headers"]  # Ollama and local servers need none


async def test_anthropic_sends_its_key_and_version(server: LocalServer) -> None:
    sent = await _send(server, "anthropic", FAKE_KEY)
    assert sent["path"] == "/v1/messages"
    assert sent["headers"]["x-api-key"] == FAKE_KEY
    assert sent["headers"]["anthropic-version"] == "2023-06-01"
    assert sent["body"]["stream"] is True


async def test_key_never_appears_in_error_messages(server: LocalServer) -> None:
    echoes = [
        Reply(
            status=401,
            headers={"content-type": "application/json"},
            pieces=[b'{"error":{"message":"Bad key %s"}}' % FAKE_KEY.encode()],
        ),
        Reply(
            status=502,
            headers={"content-type": "text/html"},
            pieces=[b"<html><title>Proxy rejected %s</title></html>" % FAKE_KEY.encode()],
        ),
        Reply(
            headers={"content-type": "text/event-stream"},
            pieces=[b'data: {"error":{"message":"key %s is banned"}}\n\n' % FAKE_KEY.encode()],
        ),
    ]
    server.replies.extend(echoes)
    provider = make_provider(
        ProviderSettings(kind="openai", model="m", base_url=f"{server.url}/v1", api_key=FAKE_KEY)
    )
    request = LLMRequest(model="m", messages=(user_message("x"),))
    try:
        errors = [(await collect(provider.stream(request))).error for _ in echoes]
    finally:
        await provider.aclose()
    assert [e.kind for e in errors if e is not None] == [
        LLMErrorKind.AUTH,
        LLMErrorKind.STATUS,
        LLMErrorKind.PROVIDER,
    ]
    for error in errors:
        assert error is not None
        assert FAKE_KEY not in error.message
        assert FAKE_KEY not in error.model_dump_json()
        assert "RECOGNISABLE" not in error.message


def test_key_is_not_in_the_settings_repr() -> None:
    settings = ProviderSettings(kind="openai", model="m", api_key=FAKE_KEY)
    assert FAKE_KEY not in repr(settings)
