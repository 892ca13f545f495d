"""Provider quirks seen in the wild but not in the recordings, written as small streams."""

from __future__ import annotations

import json

from tests.llm.helpers import SSE_HEADERS, openai_chunk, run_once, settings_for
from tests.llm.server import LocalServer, Reply
from tui_agent.vocab import FinishReason


async def test_stop_after_streamed_tool_calls_is_tool_use(server: LocalServer) -> None:
    call = (
        b'data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1",'
        b'"type":"function","function":{"name":"glob","arguments":"{\\"pattern\\":\\"*\\"}"}}]}}]}'
        b"\n\n"
    )
    server.replies.append(Reply(headers=SSE_HEADERS, pieces=[call, openai_chunk(finish="stop")]))
    out = await run_once(settings_for(server))
    assert out.tool_calls == [("call_1", "glob", '{"pattern":"*"}')]
    assert out.finish is not None
    assert (out.finish.reason, out.finish.raw) == (FinishReason.TOOL_USE, "stop")


def _callopenai_chunk(calls: list[dict[str, object]]) -> bytes:
    chunk = {"id": "c1", "choices": [{"index": 0, "delta": {"tool_calls": calls}}]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _call(call_id: str | None, name: str | None, arguments: str, **index: int) -> dict[str, object]:
    function: dict[str, object] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    return {
        **index,
        **({"id": call_id} if call_id else {}),
        "type": "function",
        "function": function,
    }


async def test_tool_calls_without_an_index_are_told_apart_by_id(server: LocalServer) -> None:
    pieces = [
        _callopenai_chunk([_call("call_a", "glob", '{"pattern":')]),
        _callopenai_chunk([_call(None, None, '"*"}')]),
        _callopenai_chunk([_call("call_b", "grep", '{"pattern":"x"}')]),
        openai_chunk(finish="tool_calls"),
    ]
    server.replies.append(Reply(headers=SSE_HEADERS, pieces=pieces))
    out = await run_once(settings_for(server))
    assert out.tool_calls == [
        ("call_a", "glob", '{"pattern":"*"}'),
        ("call_b", "grep", '{"pattern":"x"}'),
    ]


async def test_a_new_id_under_a_used_index_is_a_new_call(server: LocalServer) -> None:
    pieces = [
        _callopenai_chunk([_call("call_a", "glob", '{"pattern":"*"}', index=0)]),
        _callopenai_chunk([_call("call_b", "grep", '{"pattern":"x"}', index=0)]),
        openai_chunk(finish="tool_calls"),
    ]
    server.replies.append(Reply(headers=SSE_HEADERS, pieces=pieces))
    out = await run_once(settings_for(server))
    assert out.tool_calls == [
        ("call_a", "glob", '{"pattern":"*"}'),
        ("call_b", "grep", '{"pattern":"x"}'),
    ]


async def test_reasoning_comes_before_text_in_the_same_delta(server: LocalServer) -> None:
    both = {
        "id": "c1",
        "choices": [{"index": 0, "delta": {"reasoning_content": "thought.", "content": "Answer."}}],
    }
    pieces = [f"data: {json.dumps(both)}\n\n".encode(), openai_chunk(finish="stop")]
    server.replies.append(Reply(headers=SSE_HEADERS, pieces=pieces))
    out = await run_once(settings_for(server))
    kinds = [event.type for event in out.events if event.type in ("think.delta", "text.delta")]
    assert kinds == ["think.delta", "text.delta"]
