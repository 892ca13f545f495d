"""Anthropic prompt caching: where the `cache_control` breakpoints go, the four-breakpoint limit,
step N+1 marking the block step N wrote, the switch that turns it off, and the wire body."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.llm.helpers import collect, fixture, settings_for
from tests.llm.server import LocalServer, Reply
from tui_agent.llm import ProviderSettings, make_provider
from tui_agent.llm._anthropic import build_anthropic_body
from tui_agent.session import load_config
from tui_agent.vocab import (
    LLMRequest,
    Message,
    TextPart,
    ThinkPart,
    ToolCall,
    ToolSpec,
    user_message,
)

EPHEMERAL = {"type": "ephemeral"}
TOOLS = tuple(
    ToolSpec(name=name, description=f"{name} tool.", parameters={"type": "object"})
    for name in ("read_file", "write_file", "shell")
)
CACHED = ProviderSettings(kind="anthropic", model="claude-x")


def _reply(step: int) -> Message:
    return Message(
        role="assistant",
        content=(ThinkPart(think="hm", signature=f"sig{step}"), TextPart(text=f"step {step}")),
        tool_calls=(
            ToolCall(id=f"a{step}", name="read_file", arguments="{}"),
            ToolCall(id=f"b{step}", name="shell", arguments="{}"),
        ),
    )


def _results(step: int) -> tuple[Message, ...]:
    return tuple(
        Message(role="tool", tool_call_id=f"{k}{step}", content=(TextPart(text=f"out {k}"),))
        for k in "ab"
    )


def _conversation(steps: int) -> tuple[Message, ...]:
    """A prompt, then `steps` tool steps (each a reply with two calls and their results)."""
    messages: list[Message] = [user_message("Fix the bug.")]
    for step in range(steps):
        messages += [_reply(step), *_results(step)]
    return tuple(messages)


def _request(messages: tuple[Message, ...]) -> LLMRequest:
    return LLMRequest(model="claude-x", system="You are careful.", messages=messages, tools=TOOLS)


def _marks(body: dict[str, Any]) -> list[str]:
    """Where the breakpoints are, as readable paths."""
    tools = body.get("tools", ())
    found = [f"tools[{i}]" for i, tool in enumerate(tools) if "cache_control" in tool]
    system = body.get("system")
    if isinstance(system, list):
        found += [f"system[{i}]" for i, block in enumerate(system) if "cache_control" in block]
    for i, message in enumerate(body["messages"]):
        for j, block in enumerate(message["content"]):
            if "cache_control" in block:
                assert block["cache_control"] == EPHEMERAL
                found.append(f"messages[{i}][{j}]")
    return found


def _unmarked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def test_breakpoints_on_tools_system_previous_end_and_last_message() -> None:
    body = build_anthropic_body(_request(_conversation(2)), CACHED)
    # messages: 0 user, 1 reply, 2 results, 3 reply, 4 results: step 2's request ended at 2.
    assert _marks(body) == ["tools[2]", "system[0]", "messages[2][1]", "messages[4][1]"]
    assert body["system"] == [
        {"type": "text", "text": "You are careful.", "cache_control": EPHEMERAL}
    ]


def test_the_first_request_marks_three_and_a_bare_one_marks_its_message() -> None:
    first = build_anthropic_body(_request(_conversation(0)), CACHED)
    assert _marks(first) == ["tools[2]", "system[0]", "messages[0][0]"]
    bare = build_anthropic_body(LLMRequest(model="m", messages=(user_message("hi"),)), CACHED)
    assert _marks(bare) == ["messages[0][0]"]
    assert "system" not in bare


def test_never_more_than_four_breakpoints_and_never_on_thinking() -> None:
    for steps in range(6):
        messages = _conversation(steps)
        for tail in ((), (user_message("and a steer"),), (_reply(99),)):
            body = build_anthropic_body(_request((*messages, *tail)), CACHED)
            marks = _marks(body)
            assert 1 <= len(marks) <= 4
            for message in body["messages"]:
                for block in message["content"]:
                    if block["type"] in ("thinking", "redacted_thinking"):
                        assert "cache_control" not in block


def test_step_n_plus_one_reads_the_block_step_n_wrote() -> None:
    """The cache is an exact prefix up to a marked block: the block step N marked last must be
    marked again in step N+1, and everything up to it must be the same bytes."""
    for steps in range(1, 8):
        before = build_anthropic_body(_request(_conversation(steps - 1)), CACHED)
        after = build_anthropic_body(_request(_conversation(steps)), CACHED)
        written = _marks(before)[-1]
        assert written in _marks(after)
        end = len(before["messages"])
        assert _unmarked(after["messages"][:end]) == _unmarked(before["messages"])
        assert after["messages"][end - 1]["content"][-1] == before["messages"][-1]["content"][-1]


def test_the_switch_turns_caching_off() -> None:
    settings = ProviderSettings(kind="anthropic", model="claude-x", prompt_cache=False)
    body = build_anthropic_body(_request(_conversation(3)), settings)
    assert "cache_control" not in json.dumps(body)
    assert body["system"] == "You are careful."


def test_config_prompt_cache_false_reaches_the_settings(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("prompt_cache = false\n")
    assert load_config(path).prompt_cache is False
    assert load_config(tmp_path / "missing.toml").prompt_cache is True


async def test_the_wire_body_carries_the_breakpoints(server: LocalServer) -> None:
    body, _ = fixture("anthropic_messages/ant_text_basic")
    server.replies.append(Reply(pieces=[body]))
    provider = make_provider(settings_for(server, "anthropic", api_key="k"))
    try:
        outcome = await collect(provider.stream(_request(_conversation(1))))
    finally:
        await provider.aclose()
    assert outcome.error is None
    sent = server.requests[0].json()
    assert _marks(sent) == ["tools[2]", "system[0]", "messages[0][0]", "messages[2][1]"]
