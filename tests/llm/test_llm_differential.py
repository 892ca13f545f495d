"""Differential: the official SDKs accumulate the same recorded bytes; we must agree with them.

Both sides read the recording from the same local socket server. We compare the final text,
reasoning, tool calls and usage. Where the SDK has no notion of a provider quirk (Mistral's
content-part arrays), the test says so instead of comparing.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState

from tests.llm.helpers import Outcome, fixtures_root
from tests.llm.server import LocalServer
from tests.llm.test_llm_fixtures import run, serve
from tui_agent.vocab import TokenUsage

_ROOT = fixtures_root()
OPENAI = sorted(p.stem for p in (_ROOT / "openai_chat").glob("*.sse"))
ANTHROPIC = sorted(p.stem for p in (_ROOT / "anthropic_messages").glob("*.sse"))
# The SDK types `delta.content` as a string; Mistral's arrays of thinking parts are beyond it.
OPENAI_SDK_BLIND = {"mistral_magistral_thinking_content_parts"}


async def _openai_sdk(server: LocalServer) -> Any:
    client = openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key="test", max_retries=0)
    try:
        stream = await client.chat.completions.create(
            model="recorded", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
        async for chunk in stream:
            state.handle_chunk(chunk)
        return state.current_completion_snapshot
    finally:
        await client.close()


def _openai_usage(usage: Any) -> TokenUsage | None:
    if usage is None:
        return None
    details = usage.prompt_tokens_details
    cached = (details.cached_tokens or 0) if details is not None else 0
    return TokenUsage(
        input_other=usage.prompt_tokens - cached,
        input_cache_read=cached,
        output=usage.completion_tokens,
    )


@pytest.mark.parametrize("name", OPENAI)
async def test_openai_sdk_accumulates_the_same_message(server: LocalServer, name: str) -> None:
    if name in OPENAI_SDK_BLIND:
        pytest.skip("the openai SDK cannot accumulate content-part arrays")
    serve(server, f"openai_chat/{name}")
    ours = await run(server, "openai_chat")
    serve(server, f"openai_chat/{name}")
    try:
        snapshot = await _openai_sdk(server)
    except openai.APIError as exc:
        # The SDK raises on an error inside the stream; we report the same failure as a value.
        assert ours.error is not None
        assert ours.error.message.split(":")[0] in exc.message
        return
    message = snapshot.choices[0].message
    extra = message.model_extra or {}
    assert ours.text == (message.content or "") + (message.refusal or "")
    assert ours.thinking == (extra.get("reasoning_content") or extra.get("reasoning") or "")
    sdk_calls = [
        (call.id, call.function.name, call.function.arguments)
        for call in (message.tool_calls or [])
    ]
    assert ours.tool_calls == sdk_calls
    assert ours.usage == _openai_usage(snapshot.usage)


def _anthropic_view(message: Any) -> Outcome:
    view = Outcome()
    for block in message.content:
        if block.type == "text":
            view.text += block.text
        elif block.type == "thinking":
            view.thinking += block.thinking
            view.signatures.append(block.signature)
        elif block.type == "redacted_thinking":
            view.encrypted.append(block.data)
        elif block.type == "tool_use":
            view.calls[len(view.calls)] = {
                "id": block.id,
                "name": block.name,
                "arguments": json.dumps(block.input),
            }
    usage = message.usage
    view.usage = TokenUsage(
        input_other=usage.input_tokens,
        output=usage.output_tokens,
        input_cache_read=usage.cache_read_input_tokens or 0,
        input_cache_creation=usage.cache_creation_input_tokens or 0,
    )
    return view


def _calls(outcome: Outcome) -> list[tuple[str | None, str | None, Any]]:
    """Tool calls with arguments as parsed objects; a truncated one as its raw text."""
    calls = []
    for call_id, name, arguments in outcome.tool_calls:
        try:
            parsed: Any = json.loads(arguments)
        except ValueError:
            parsed = arguments
        calls.append((call_id, name, parsed))
    return calls


@pytest.mark.parametrize("name", ANTHROPIC)
async def test_anthropic_sdk_accumulates_the_same_message(server: LocalServer, name: str) -> None:
    serve(server, f"anthropic_messages/{name}")
    ours = await run(server, "anthropic_messages")
    serve(server, f"anthropic_messages/{name}")
    client = anthropic.AsyncAnthropic(base_url=server.url, api_key="test", max_retries=0)
    try:
        async with client.messages.stream(
            model="recorded", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            sdk = _anthropic_view(await stream.get_final_message())
    finally:
        await client.close()
    assert ours.text == sdk.text
    assert ours.thinking == sdk.thinking
    assert ours.signatures == sdk.signatures
    assert ours.encrypted == sdk.encrypted
    assert ours.usage == sdk.usage
    if name == "ant_max_tokens_truncated_tool_input":
        # The SDK parses the cut-off input leniently into a partial object; we keep the raw
        # text for the loop to judge. Both agree on which call it was.
        assert [c[:2] for c in _calls(ours)] == [c[:2] for c in _calls(sdk)]
    else:
        assert _calls(ours) == _calls(sdk)
