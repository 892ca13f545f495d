"""Images a tool returned reach the model with every protocol, and the text around them stays
apart: in Anthropic's `tool_result` itself; for OpenAI Chat and Responses (whose tool messages
take text only) in a user message right after the run of tool results, with a note naming the
call they came from."""

from __future__ import annotations

from typing import Any

from tui_agent.llm import ProviderSettings
from tui_agent.llm._anthropic import build_anthropic_body
from tui_agent.llm._openai import build_openai_body
from tui_agent.llm._openai_responses import build_responses_body
from tui_agent.vocab import ImagePart, LLMRequest, Message, TextPart, ToolCall, user_message

DATA = "iVBORw0KGgo="
SHOT = ImagePart(media_type="image/png", data=DATA)
DATA_URL = f"data:image/png;base64,{DATA}"


def _request() -> LLMRequest:
    calls = (
        ToolCall(id="call_1", name="mcp__web__screenshot", arguments="{}"),
        ToolCall(id="call_2", name="read_file", arguments='{"path": "a"}'),
    )
    return LLMRequest(
        model="m",
        messages=(
            user_message("look"),
            Message(role="assistant", tool_calls=calls),
            Message(
                role="tool",
                tool_call_id="call_1",
                content=(TextPart(text="before"), SHOT, TextPart(text="after")),
            ),
            Message(role="tool", tool_call_id="call_2", content=(TextPart(text="alpha"),)),
        ),
    )


def test_anthropic_tool_result_carries_the_image_between_its_texts() -> None:
    settings = ProviderSettings(kind="anthropic", model="m", prompt_cache=False)
    messages = build_anthropic_body(_request(), settings)["messages"]
    first = messages[2]["content"][0]
    assert first["tool_use_id"] == "call_1"
    assert first["content"] == [
        {"type": "text", "text": "before"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": DATA}},
        {"type": "text", "text": "after"},
    ]


def test_openai_chat_sends_the_image_after_the_tool_results_with_a_note() -> None:
    settings = ProviderSettings(kind="openai", model="m", base_url="http://h/v1")
    messages: list[dict[str, Any]] = build_openai_body(_request(), settings)["messages"]
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "tool", "tool", "user"]
    assert messages[2]["content"] == "before\n[image 1: attached in the next user message]\nafter"
    assert messages[3]["content"] == "alpha"
    note, image = messages[4]["content"]
    assert "call_1" in note["text"] and "mcp__web__screenshot" in note["text"]
    assert image == {"type": "image_url", "image_url": {"url": DATA_URL}}


def test_openai_responses_sends_the_image_after_the_tool_outputs_with_a_note() -> None:
    settings = ProviderSettings(kind="openai-responses", model="m")
    items: list[dict[str, Any]] = build_responses_body(_request(), settings)["input"]
    outputs = [item for item in items if item.get("type") == "function_call_output"]
    assert outputs[0]["output"] == "before\n[image 1: attached in the next user message]\nafter"
    last = items[-1]
    assert last["role"] == "user" and items[-2] is outputs[1]
    note, image = last["content"]
    assert note["type"] == "input_text" and "call_1" in note["text"]
    assert image == {"type": "input_image", "image_url": DATA_URL}
