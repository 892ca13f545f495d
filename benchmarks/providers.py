"""Provider throughput: decode + accumulate a 20,000-chunk OpenAI stream and a 20,000-event
Anthropic stream from memory, ours beside the official SDKs on the same bytes.

Every path goes through httpx with an in-memory transport that hands out the body in 4 KiB
pieces, so both sides pay for the same HTTP layer and no socket is involved. Two kinds of work
are measured on the SDK side, and the ratio is given against each:
- the same work as ours ("deltas"): read the stream's parsed chunks or events and collect the
  text, reasoning and tool-argument deltas and the usage into lists, joined at the end; this is
  what our provider does with its own events, so this ratio compares like with like;
- the SDKs' own accumulators ("snapshot"): `ChatCompletionStreamState` and
  `MessageStream.get_final_message`, which also keep a whole message up to date after every
  chunk (what an SDK user gets for free, and more work than ours does).
A decode-only section compares the SSE decoders alone (ours, httpx-sse, the openai SDK's).

Run: .venv/bin/python benchmarks/providers.py
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anthropic
import httpx
import httpx2
import httpx_sse
import openai
from openai._streaming import SSEDecoder as OpenAISSEDecoder
from openai.lib.streaming.chat import ChatCompletionStreamState

from tui_agent.llm import ProviderSettings, make_provider
from tui_agent.llm._sse import SSEDecoder
from tui_agent.vocab import (
    Finished,
    LLMRequest,
    StreamFailed,
    TextDelta,
    ThinkDelta,
    ToolCallDelta,
    UsageReported,
    user_message,
)

CHUNKS = 20_000
PIECE = 4096
ROUNDS = 3
DECODE_ROUNDS = 9  # decoding alone takes milliseconds: more rounds to see past a busy machine
SSE_HEADERS = {"content-type": "text/event-stream"}


def openai_stream() -> bytes:
    """4,000 reasoning chunks, 14,000 text chunks, one tool call in 1,998 chunks, finish, usage."""
    base = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1727346171,
        "model": "gpt-4o-2024-08-06",
        "system_fingerprint": "fp_7568d46099",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return "data: " + json.dumps({**base, "choices": [choice], **extra}) + "\n\n"

    lines = [chunk({"role": "assistant", "content": ""})]
    lines += [chunk({"reasoning_content": f" step{i}"}) for i in range(3_999)]
    lines += [chunk({"content": f" word{i}"}) for i in range(14_000)]
    call = {
        "index": 0,
        "id": "call_bench",
        "type": "function",
        "function": {"name": "read_file", "arguments": ""},
    }
    lines.append(chunk({"tool_calls": [call]}))
    lines += [
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": f'"k{i}":{i},'}}]})
        for i in range(1_997)
    ]
    lines.append(chunk({}, "tool_calls"))
    usage = {"prompt_tokens": 100, "completion_tokens": 20_000, "total_tokens": 20_100}
    lines.append("data: " + json.dumps({**base, "choices": [], "usage": usage}) + "\n\n")
    assert len(lines) == CHUNKS
    return ("".join(lines) + "data: [DONE]\n\n").encode()


def anthropic_stream() -> bytes:
    """message_start, 3,995 thinking deltas, 14,000 text deltas, a tool_use, message_stop."""

    def event(kind: str, payload: dict[str, Any]) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **payload})}\n\n"

    usage = {
        "input_tokens": 100,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 1,
    }
    message = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    events = [event("message_start", {"message": message})]
    events.append(
        event(
            "content_block_start",
            {"index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        )
    )
    events += [
        event(
            "content_block_delta",
            {"index": 0, "delta": {"type": "thinking_delta", "thinking": f" step{i}"}},
        )
        for i in range(3_995)
    ]
    events.append(
        event(
            "content_block_delta",
            {"index": 0, "delta": {"type": "signature_delta", "signature": "EqQ="}},
        )
    )
    events.append(event("content_block_stop", {"index": 0}))
    events.append(
        event("content_block_start", {"index": 1, "content_block": {"type": "text", "text": ""}})
    )
    events += [
        event(
            "content_block_delta",
            {"index": 1, "delta": {"type": "text_delta", "text": f" word{i}"}},
        )
        for i in range(14_000)
    ]
    events.append(event("content_block_stop", {"index": 1}))
    events.append(
        event(
            "content_block_start",
            {
                "index": 2,
                "content_block": {
                    "type": "tool_use",
                    "id": "toolu_bench",
                    "name": "read_file",
                    "input": {},
                },
            },
        )
    )
    events.append(
        event(
            "content_block_delta",
            {"index": 2, "delta": {"type": "input_json_delta", "partial_json": "{"}},
        )
    )
    events += [
        event(
            "content_block_delta",
            {"index": 2, "delta": {"type": "input_json_delta", "partial_json": f'"k{i}": {i}, '}},
        )
        for i in range(1_993)
    ]
    events.append(
        event(
            "content_block_delta",
            {"index": 2, "delta": {"type": "input_json_delta", "partial_json": '"end": 0}'}},
        )
    )
    events.append(event("content_block_stop", {"index": 2}))
    events.append(
        event(
            "message_delta",
            {
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 20_000},
            },
        )
    )
    events.append(event("message_stop", {}))
    assert len(events) == CHUNKS, len(events)
    return "".join(events).encode()


def pieces(body: bytes) -> list[bytes]:
    return [body[i : i + PIECE] for i in range(0, len(body), PIECE)]


def transport(body: bytes, http: Any = httpx) -> Any:
    """An in-memory transport of `http` (httpx, or httpx2 for the anthropic SDK)."""
    parts = pieces(body)

    async def stream() -> AsyncIterator[bytes]:
        for part in parts:
            yield part

    def handler(request: Any) -> Any:
        return http.Response(200, headers=SSE_HEADERS, content=stream())

    return http.MockTransport(handler)


async def ours(kind: str, body: bytes) -> int:
    base = "http://bench/v1" if kind == "openai" else "http://bench"
    client = httpx.AsyncClient(transport=transport(body))
    provider = make_provider(ProviderSettings(kind=kind, model="bench", base_url=base), client)  # type: ignore[arg-type]
    text: list[str] = []
    thinking: list[str] = []
    arguments: dict[int, list[str]] = {}
    usage = None
    async for event in provider.stream(LLMRequest(model="bench", messages=(user_message("x"),))):
        if isinstance(event, TextDelta):
            text.append(event.text)
        elif isinstance(event, ThinkDelta):
            thinking.append(event.text)
        elif isinstance(event, ToolCallDelta):
            arguments.setdefault(event.index, []).append(event.arguments)
        elif isinstance(event, UsageReported):
            usage = event.usage if usage is None else usage.merge(event.usage)
        elif isinstance(event, StreamFailed):
            raise RuntimeError(event.error.message)
        elif isinstance(event, Finished):
            break
    await client.aclose()
    assert json.loads(
        "{" + "".join(arguments[0])[:-1] + "}" if kind == "openai" else "".join(arguments[0])
    )
    return len("".join(text)) + len("".join(thinking))


def collected(text: list[str], thinking: list[str], arguments: dict[int, list[str]]) -> int:
    """What each "deltas" path ends with, joined as ours joins its own."""
    assert arguments and all("".join(parts) for parts in arguments.values())
    return len("".join(text)) + len("".join(thinking))


async def openai_sdk_deltas(body: bytes) -> int:
    http = httpx.AsyncClient(transport=transport(body))
    client = openai.AsyncOpenAI(base_url="http://bench/v1", api_key="x", http_client=http)
    stream = await client.chat.completions.create(
        model="bench", messages=[{"role": "user", "content": "x"}], stream=True
    )
    text: list[str] = []
    thinking: list[str] = []
    arguments: dict[int, list[str]] = {}
    usage = None
    async for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                text.append(delta.content)
            reasoning = (delta.model_extra or {}).get("reasoning_content")
            if reasoning:
                thinking.append(reasoning)
            for call in delta.tool_calls or ():
                if call.function is not None and call.function.arguments:
                    arguments.setdefault(call.index, []).append(call.function.arguments)
    await client.close()
    assert usage is not None
    return collected(text, thinking, arguments)


async def anthropic_sdk_deltas(body: bytes) -> int:
    http = httpx2.AsyncClient(transport=transport(body, httpx2))
    client = anthropic.AsyncAnthropic(base_url="http://bench", api_key="x", http_client=http)
    stream = await client.messages.create(
        model="bench", max_tokens=10, messages=[{"role": "user", "content": "x"}], stream=True
    )
    text: list[str] = []
    thinking: list[str] = []
    arguments: dict[int, list[str]] = {}
    usage = None
    async for event in stream:
        if event.type == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                text.append(delta.text)
            elif delta.type == "thinking_delta":
                thinking.append(delta.thinking)
            elif delta.type == "input_json_delta":
                arguments.setdefault(event.index, []).append(delta.partial_json)
        elif event.type in ("message_start", "message_delta"):
            usage = event.message.usage if event.type == "message_start" else event.usage
    await client.close()
    assert usage is not None
    return collected(text, thinking, arguments)


async def openai_sdk(body: bytes) -> int:
    http = httpx.AsyncClient(transport=transport(body))
    client = openai.AsyncOpenAI(base_url="http://bench/v1", api_key="x", http_client=http)
    stream = await client.chat.completions.create(
        model="bench", messages=[{"role": "user", "content": "x"}], stream=True
    )
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    async for chunk in stream:
        state.handle_chunk(chunk)
    message = state.current_completion_snapshot.choices[0].message
    await client.close()
    extra = message.model_extra or {}
    return len(message.content or "") + len(extra.get("reasoning_content", ""))


async def anthropic_sdk(body: bytes) -> int:
    # The anthropic SDK brings its own fork of httpx and accepts only that one's clients.
    http = httpx2.AsyncClient(transport=transport(body, httpx2))
    client = anthropic.AsyncAnthropic(base_url="http://bench", api_key="x", http_client=http)
    async with client.messages.stream(
        model="bench", max_tokens=10, messages=[{"role": "user", "content": "x"}]
    ) as stream:
        message = await stream.get_final_message()
    await client.close()
    return sum(len(getattr(b, "text", "") or getattr(b, "thinking", "")) for b in message.content)


def decode_ours(body: bytes) -> int:
    decoder = SSEDecoder()
    count = 0
    for part in pieces(body):
        count += len(decoder.feed(part))
    return count + len(decoder.close())


def decode_httpx_sse(body: bytes) -> int:
    response = httpx.Response(200, headers=SSE_HEADERS, content=iter(pieces(body)))
    return sum(1 for _ in httpx_sse.EventSource(response).iter_sse())


def decode_openai_sdk(body: bytes) -> int:
    return sum(1 for _ in OpenAISSEDecoder().iter_bytes(iter(pieces(body))))


def best_of(run: Callable[[], Any], rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def best_of_async(make: Callable[[], Awaitable[Any]]) -> float:
    return best_of(lambda: asyncio.run(make()))  # type: ignore[arg-type,return-value]


def row(label: str, seconds: float, size: int, baselines: list[float]) -> str:
    ratios = " | ".join(f"{b / seconds:5.2f}x" for b in baselines) or "-"
    return (
        f"| {label:<42} | {CHUNKS / seconds:>10,.0f} | {size / seconds / 1e6:>7.1f} |"
        f" {seconds * 1000:>8.1f} | {ratios} |"
    )


def main() -> None:
    oa, an = openai_stream(), anthropic_stream()
    sides = {
        "OpenAI": (
            oa,
            [
                ("openai SDK, deltas (same work as ours)", lambda: openai_sdk_deltas(oa)),
                ("openai SDK, ChatCompletionStreamState", lambda: openai_sdk(oa)),
                ("tui_agent.llm", lambda: ours("openai", oa)),
            ],
        ),
        "Anthropic": (
            an,
            [
                ("anthropic SDK, deltas (same work as ours)", lambda: anthropic_sdk_deltas(an)),
                ("anthropic SDK, get_final_message", lambda: anthropic_sdk(an)),
                ("tui_agent.llm", lambda: ours("anthropic", an)),
            ],
        ),
    }
    print(
        f"Decode + accumulate, {CHUNKS:,} chunks from memory, {PIECE} B pieces, best of "
        f"{ROUNDS}; ratio = SDK time / our time, against the deltas and the snapshot path\n"
    )
    for stream, (body, paths) in sides.items():
        times = [best_of_async(make) for _, make in paths]
        print(f"{stream} stream ({len(body) / 1e6:.1f} MB)")
        print(f"| {'path':<42} | {'chunks/s':>10} | {'MB/s':>7} | {'ms':>8} | ratios |")
        print(f"|{'-' * 44}|{'-' * 12}|{'-' * 9}|{'-' * 10}|--------|")
        for (label, _), seconds in zip(paths, times, strict=True):
            baselines = times[:2] if label == "tui_agent.llm" else []
            print(row(label, seconds, len(body), baselines))
        print()
    print(
        f"SSE decoding alone, OpenAI stream ({len(oa) / 1e6:.1f} MB), best of {DECODE_ROUNDS}; "
        "ratio against httpx-sse"
    )
    httpx_sse_s = best_of(lambda: decode_httpx_sse(oa), DECODE_ROUNDS)
    sdk_s = best_of(lambda: decode_openai_sdk(oa), DECODE_ROUNDS)
    ours_s = best_of(lambda: decode_ours(oa), DECODE_ROUNDS)
    print(row("httpx-sse", httpx_sse_s, len(oa), []))
    print(row("openai SDK SSEDecoder", sdk_s, len(oa), [httpx_sse_s]))
    print(row("tui_agent.llm._sse", ours_s, len(oa), [httpx_sse_s]))


if __name__ == "__main__":
    main()
