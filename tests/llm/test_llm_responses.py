"""The OpenAI Responses API provider against real recordings (`fixtures/openai_responses/`,
from pydantic-ai's cassettes; see INDEX.md there), served byte for byte from a local server.

Each recorded stream ends with `response.completed`, which holds the whole response: the
text, calls, reasoning and usage rebuilt from the deltas must equal it. The request bodies
our builder makes are compared with the ones the recording's client sent and the API accepted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from tests.llm.helpers import Outcome, collect
from tests.llm.server import LocalServer, Reply, split
from tui_agent.context import EventLog
from tui_agent.llm import ProviderSettings, make_provider
from tui_agent.llm._openai_responses import build_responses_body
from tui_agent.loop.api import LoopInfo
from tui_agent.loop.factory import build_loop
from tui_agent.session import Config, resolve
from tui_agent.tools import Tool, ToolContext
from tui_agent.vocab import (
    FinishReason,
    LLMErrorKind,
    LLMRequest,
    Message,
    TextPart,
    ThinkPart,
    TokenUsage,
    ToolCall,
    ToolResult,
    ToolSpec,
    user_message,
)

ROOT = Path(__file__).resolve().parent / "fixtures" / "openai_responses"
STREAMS = sorted(p.stem for p in ROOT.glob("*.sse"))
KEY = "sk-test-RESPONSES-0123456789"


def _meta(name: str) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads((ROOT / f"{name}.meta.json").read_text())
    return meta


def _final(name: str) -> dict[str, Any]:
    """The `response` of the recording's closing event, read straight from its data lines."""
    for line in reversed((ROOT / f"{name}.sse").read_text().splitlines()):
        if line.startswith("data: {") and '"type":"response.completed"' in line:
            response: dict[str, Any] = json.loads(line[6:])["response"]
            return response
    raise AssertionError(f"{name} has no response.completed")


def _done_items(name: str) -> list[dict[str, Any]]:
    """The items of the recording's `output_item.done` events. A reasoning item's encrypted
    content there is not the same string as in `response.completed` (the server encrypts each
    copy anew); the client echoes the one it streamed."""
    items = []
    for line in (ROOT / f"{name}.sse").read_text().splitlines():
        if line.startswith("data: {") and '"type":"response.output_item.done"' in line:
            items.append(json.loads(line[6:])["item"])
    return items


def _serve(server: LocalServer, name: str, suffix: str = ".sse") -> None:
    meta = _meta(name)
    body = (ROOT / f"{name}{suffix}").read_bytes()
    headers = dict(meta["response_headers"])
    server.replies.append(
        Reply(status=meta["http_status"], headers=headers, pieces=split(body, 401))
    )


async def _run(server: LocalServer, request: LLMRequest | None = None) -> Outcome:
    settings = ProviderSettings(
        kind="openai-responses", model="recorded", base_url=f"{server.url}/v1", api_key=KEY
    )
    provider = make_provider(settings)
    try:
        return await collect(
            provider.stream(request or LLMRequest(model="recorded", messages=(user_message("hi"),)))
        )
    finally:
        await provider.aclose()


@pytest.mark.parametrize("name", STREAMS)
async def test_recorded_stream_rebuilds_the_final_response(server: LocalServer, name: str) -> None:
    _serve(server, name)
    out = await _run(server)
    final = _final(name)
    items = final["output"]
    assert out.error is None, out.error
    text = "".join(
        part.get("text", "")
        for item in items
        if item["type"] == "message"
        for part in item["content"]
    )
    calls = [
        (i["call_id"], i["name"], i["arguments"]) for i in items if i["type"] == "function_call"
    ]
    reasoning = [i for i in _done_items(name) if i.get("encrypted_content")]
    encrypted = [i["encrypted_content"] for i in reasoning]
    assert out.text == text
    assert out.tool_calls == calls
    assert out.encrypted == encrypted
    assert out.signatures == [i["id"] for i in reasoning]
    assert out.message_id == final["id"]
    usage = final["usage"]
    cached = usage["input_tokens_details"]["cached_tokens"]
    assert out.usage == TokenUsage(
        input_other=usage["input_tokens"] - cached,
        input_cache_read=cached,
        output=usage["output_tokens"],
    )
    assert out.finish is not None
    want = FinishReason.TOOL_USE if calls else FinishReason.END_TURN
    assert (out.finish.reason, out.finish.raw) == (want, "completed")


async def test_reasoning_summaries_and_raw_reasoning_are_thinking(server: LocalServer) -> None:
    _serve(server, "resp_reasoning_summary_then_text")
    summary = await _run(server)
    parts = [
        s["text"]
        for i in _final("resp_reasoning_summary_then_text")["output"]
        if i["type"] == "reasoning"
        for s in i["summary"]
    ]
    assert len(parts) == 4
    assert summary.thinking == "\n\n".join(parts)
    _serve(server, "resp_openrouter_raw_reasoning_text")  # data-only SSE, then [DONE]
    raw = await _run(server)
    assert (
        raw.thinking
        == 'The user asks: "What is 2+2?" They expect a straightforward answer: 4. Just answer 4.'
    )
    assert raw.encrypted == []  # OpenRouter returns no encrypted content: nothing to echo


async def test_cached_input_tokens_are_cache_reads(server: LocalServer) -> None:
    _serve(server, "resp_web_search_cached_tokens")
    out = await _run(server)
    assert out.usage == TokenUsage(input_other=9463 - 8320, input_cache_read=8320, output=582)


@pytest.mark.parametrize(
    ("name", "kind", "says"),
    [
        ("err_responses_400_invalid_temperature", LLMErrorKind.STATUS, "Invalid 'temperature'"),
        ("err_responses_400_model_not_found", LLMErrorKind.NOT_FOUND, "gpt-5.2-proo"),
        (
            "err_responses_400_reasoning_without_following_item",
            LLMErrorKind.STATUS,
            "without its required following item",
        ),
    ],
)
async def test_recorded_error_is_classified(
    server: LocalServer, name: str, kind: LLMErrorKind, says: str
) -> None:
    _serve(server, name, ".json")
    out = await _run(server)
    assert out.error is not None
    assert (out.error.kind, out.error.status, out.error.retryable) == (kind, 400, False)
    assert says in out.error.message


# -- what we send -----------------------------------------------------------------------------

TOOL = ToolSpec(
    name="get_capital",
    description="",
    parameters={
        "additionalProperties": False,
        "properties": {"country": {"type": "string"}},
        "required": ["country"],
        "type": "object",
    },
)


_PLAIN_QUOTES = str.maketrans({"\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _sent_items(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Input items with what a stateless client leaves out (ids, statuses, phases) removed and
    assistant text in one shape, for comparing with the recorded request."""
    items = []
    for item in body["input"]:
        kept = {k: v for k, v in item.items() if k not in ("id", "status", "phase")}
        if kept.get("type") == "message":
            kept = {"role": "assistant", "content": "".join(p["text"] for p in kept["content"])}
        if kept.get("role") == "assistant":
            # The recorder stored request bodies with typographic quotes made plain.
            kept["content"] = kept["content"].translate(_PLAIN_QUOTES)
        items.append(kept)
    return items


def test_function_call_and_output_items_match_the_recorded_request() -> None:
    recorded = json.loads((ROOT / "resp_text_after_function_call_output.request.json").read_text())
    call_id = recorded["input"][1]["call_id"]
    request = LLMRequest(
        model="gpt-4o",
        messages=(
            user_message("What is the capital of France?"),
            Message(
                role="assistant",
                tool_calls=(
                    ToolCall(id=call_id, name="get_capital", arguments='{"country":"France"}'),
                ),
            ),
            Message(role="tool", tool_call_id=call_id, content=(TextPart(text="Paris"),)),
        ),
        tools=(TOOL,),
    )
    body = build_responses_body(request, ProviderSettings(kind="openai-responses", model="gpt-4o"))
    assert _sent_items(body) == _sent_items(recorded)
    assert body["tools"] == [{**recorded["tools"][0], "description": "", "strict": False}]
    assert (body["stream"], body["store"], body["include"]) == (
        True,
        False,
        ["reasoning.encrypted_content"],
    )


async def test_a_streamed_reasoning_item_is_echoed_as_the_api_accepted_it(
    server: LocalServer,
) -> None:
    """Step 1's recorded stream, parsed by us, then sent back: the next request's items are
    those of the recorded second request (which the API answered with 200)."""
    _serve(server, "resp_reasoning_text_then_function_call")
    first = await _run(server)
    [(call_id, name, arguments)] = first.tool_calls
    reply = Message(
        role="assistant",
        content=(
            ThinkPart(think="", signature=first.signatures[0], encrypted=first.encrypted[0]),
            TextPart(text=first.text),
        ),
        tool_calls=(ToolCall(id=call_id or "", name=name or "", arguments=arguments),),
    )
    recorded = json.loads((ROOT / "resp_text_after_reasoning_echo.request.json").read_text())
    request = LLMRequest(
        model="gpt-5.5",
        system=recorded["instructions"],
        messages=(
            user_message(recorded["input"][0]["content"]),
            reply,
            Message(role="tool", tool_call_id=call_id, content=(TextPart(text="Potato City"),)),
        ),
        tools=(TOOL,),
    )
    body = build_responses_body(request, ProviderSettings(kind="openai-responses", model="m"))
    assert _sent_items(body) == _sent_items(recorded)
    assert body["instructions"] == recorded["instructions"]


def test_other_providers_reasoning_is_not_echoed() -> None:
    reply = Message(
        role="assistant",
        content=(
            ThinkPart(think="anthropic thinking", signature="sig"),
            ThinkPart(think="", encrypted="anthropic-redacted"),
            TextPart(text="Hi."),
        ),
    )
    request = LLMRequest(model="m", messages=(user_message("hi"), reply))
    body = build_responses_body(request, ProviderSettings(kind="openai-responses", model="m"))
    assert body["input"][1:] == [{"role": "assistant", "content": "Hi."}]


# -- events the recordings lack, in their documented shapes (hand-written) ---------------------


def _events(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


async def test_incomplete_response_is_a_max_tokens_finish(server: LocalServer) -> None:
    body = _events(
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "message"}},
        {"type": "response.output_text.delta", "output_index": 0, "delta": "Part"},
        {
            "type": "response.incomplete",
            "response": {
                "status": "incomplete",
                "incomplete_details": {"reason": "max_output_tokens"},
                "usage": {"input_tokens": 5, "output_tokens": 1},
            },
        },
    )
    server.replies.append(Reply(pieces=[body]))
    out = await _run(server)
    assert out.finish is not None
    assert (out.text, out.finish.reason, out.finish.raw) == (
        "Part",
        FinishReason.MAX_TOKENS,
        "max_output_tokens",
    )


async def test_failed_response_and_error_event_are_classified(server: LocalServer) -> None:
    failed = _events(
        {
            "type": "response.failed",
            "response": {
                "status": "failed",
                "error": {"code": "server_error", "message": "The server had an error."},
            },
        }
    )
    error = _events(
        {
            "type": "error",
            "code": "rate_limit_exceeded",
            "message": "Rate limit reached. Please try again in 2s.",
            "param": None,
        }
    )
    server.replies += [Reply(pieces=[failed]), Reply(pieces=[error])]
    first, second = await _run(server), await _run(server)
    assert first.error is not None and first.error.kind is LLMErrorKind.PROVIDER
    assert "The server had an error." in first.error.message
    assert second.error is not None and second.error.retry_after_s == pytest.approx(2.0)


async def test_a_stream_cut_before_completion_is_incomplete(server: LocalServer) -> None:
    body = _events(
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "message"}},
        {"type": "response.output_text.delta", "output_index": 0, "delta": "Half an ans"},
    )
    server.replies.append(Reply(pieces=[body]))
    out = await _run(server)
    assert out.error is not None and out.error.kind is LLMErrorKind.INCOMPLETE
    assert out.error.retryable


async def test_rate_limit_status_is_retryable_with_its_wait(server: LocalServer) -> None:
    error = {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}
    body = json.dumps({"error": error}).encode()
    server.replies.append(
        Reply(
            status=429,
            headers={"content-type": "application/json", "retry-after": "3"},
            pieces=[body],
        )
    )
    out = await _run(server)
    assert out.error is not None
    assert (out.error.kind, out.error.retry_after_s, out.error.retryable) == (
        LLMErrorKind.RATE_LIMIT,
        3.0,
        True,
    )


async def test_the_request_goes_to_responses_with_a_bearer_key(server: LocalServer) -> None:
    _serve(server, "resp_background_queued_text")
    out = await _run(server)
    assert out.text == "2 + 2 equals 4."
    [request] = server.requests
    assert request.path == "/v1/responses"
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_the_provider_kind_resolves_with_the_openai_key() -> None:
    resolved = resolve(Config(), provider="openai-responses", environ={"OPENAI_API_KEY": KEY})
    assert (resolved.provider_kind, resolved.model, resolved.base_url) == (
        "openai-responses",
        "gpt-5",
        "https://api.openai.com/v1",
    )
    assert resolved.api_key == KEY


class _CapitalArgs(BaseModel):
    country: str


class _Capital(Tool[_CapitalArgs]):
    name: ClassVar[str] = "get_capital"
    description: ClassVar[str] = ""
    Args = _CapitalArgs
    read_only: ClassVar[bool] = True

    async def execute(self, args: _CapitalArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(output="Potato City")


async def test_through_the_loop_the_second_request_is_the_recorded_one(
    server: LocalServer, tmp_path: Path
) -> None:
    """Both recorded steps played to the real loop: what it sends after the tool ran (the
    reasoning item, the commentary, the call and its output) is what the API accepted."""
    _serve(server, "resp_reasoning_text_then_function_call")
    _serve(server, "resp_text_after_reasoning_echo")
    recorded = json.loads((ROOT / "resp_text_after_reasoning_echo.request.json").read_text())
    settings = ProviderSettings(
        kind="openai-responses", model="gpt-5.5", base_url=f"{server.url}/v1", api_key=KEY
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    service = await build_loop(
        provider=make_provider(settings),
        info=LoopInfo(
            provider="openai-responses",
            model="gpt-5.5",
            context_window=400_000,
            approval_mode="yolo",
            session_id="responses",
            workspace=str(workspace),
            demo=False,
        ),
        workspace=workspace,
        spill_dir=tmp_path / "spill",
        log=EventLog(tmp_path / "events.jsonl"),
        system_prompt=lambda tools: str(recorded["instructions"]),
        extra_tools=(_Capital(),),
        tool_names=("get_capital",),
    )
    try:
        result = await (await service.submit(recorded["input"][0]["content"])).result()
    finally:
        await service.close()
    assert result.type == "completed"
    second = server.requests[1].json()
    assert _sent_items(second) == _sent_items(recorded)
    assert second["instructions"] == recorded["instructions"]


def test_reasoning_items_keep_their_place_between_texts() -> None:
    reply = Message(
        role="assistant",
        content=(
            ThinkPart(think="", signature="rs_1", encrypted="enc-1"),
            TextPart(text="Looking."),
            ThinkPart(think="summary only: not echoed"),
            ThinkPart(think="", signature="rs_2", encrypted="enc-2"),
            TextPart(text="Calling."),
        ),
        tool_calls=(ToolCall(id="call_1", name="get_capital", arguments="{}"),),
    )
    request = LLMRequest(model="m", messages=(user_message("hi"), reply))
    body = build_responses_body(request, ProviderSettings(kind="openai-responses", model="m"))
    assert body["input"][1:] == [
        {"type": "reasoning", "summary": [], "encrypted_content": "enc-1"},
        {"role": "assistant", "content": "Looking."},
        {"type": "reasoning", "summary": [], "encrypted_content": "enc-2"},
        {"role": "assistant", "content": "Calling."},
        {"type": "function_call", "call_id": "call_1", "name": "get_capital", "arguments": "{}"},
    ]
