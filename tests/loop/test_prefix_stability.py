"""Prefix stability: over a 30-step turn with tools, a reminder, a steer and a compaction, run
through the real loop against a local server in both wire formats, every request starts with
the bytes of the one before it (so a provider's prompt cache serves them), except right after
the compaction, where the loop says so."""

from __future__ import annotations

import itertools
import logging
from pathlib import Path

import pytest

from tests.support.cache_session import REMINDER, STEER, Captured, Wire, extends, run_session
from tui_agent.context import load_history, project
from tui_agent.llm import ProviderSettings
from tui_agent.llm._anthropic import build_anthropic_body
from tui_agent.llm._openai import build_openai_body
from tui_agent.vocab import LLMRequest, ToolSpec

STEPS = 30
COMPACT_AFTER = 18  # the step whose reported usage makes the loop compact before the next


def _steps(captured: list[Captured]) -> list[Captured]:
    return [c for c in captured if c.kind == "step"]


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_each_request_extends_the_previous_except_after_compaction(
    wire: Wire, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="tui_agent.context.prefix")
    captured = await run_session(wire, tmp_path, steps=STEPS, compact_after=COMPACT_AFTER)
    steps = _steps(captured)
    assert len(steps) == STEPS
    assert [c.kind for c in captured].count("summary") == 1
    breaks = [n + 1 for n in range(1, STEPS) if not extends(steps[n - 1], steps[n])]
    assert breaks == [COMPACT_AFTER + 1]
    said = [r.getMessage() for r in caplog.records if r.name == "tui_agent.context.prefix"]
    assert len(said) == 1 and "history rewritten" in said[0]
    before_compaction = steps[COMPACT_AFTER - 1].prompt  # the summary holds them afterwards
    assert before_compaction.count(REMINDER) == 1 and before_compaction.count(STEER) == 1


async def test_without_compaction_the_whole_turn_is_one_growing_prefix(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="tui_agent.context.prefix")
    steps = _steps(await run_session("openai", tmp_path, steps=STEPS, compact_after=None))
    assert all(extends(a, b) for a, b in itertools.pairwise(steps))
    assert not [r for r in caplog.records if r.name == "tui_agent.context.prefix"]


async def test_anthropic_marks_the_block_the_previous_step_cached(tmp_path: Path) -> None:
    steps = _steps(await run_session("anthropic", tmp_path, steps=12, compact_after=None))
    for before, after in itertools.pairwise(steps):
        marked = _marked(after.body)
        assert len(marked) <= 4
        end = len(before.body["messages"]) - 1
        # The previous request's last block carried its newest mark; this one marks it again.
        assert (end, len(before.body["messages"][end]["content"]) - 1) in marked


def _marked(body: dict[str, object]) -> list[tuple[int, int]]:
    messages = body["messages"]
    assert isinstance(messages, list)
    found = [
        (i, j)
        for i, message in enumerate(messages)
        for j, block in enumerate(message["content"])
        if "cache_control" in block
    ]
    tools = body.get("tools")
    system = body.get("system")
    assert isinstance(tools, list) and "cache_control" in tools[-1]
    assert isinstance(system, list) and "cache_control" in system[-1]
    return found


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_a_resumed_session_extends_the_last_request_sent(wire: Wire, tmp_path: Path) -> None:
    """Reopened from its log within the cache's lifetime, a session is still served from it:
    the history folded from the log is sent with the same bytes the live loop sent."""
    steps = _steps(await run_session(wire, tmp_path, steps=12, compact_after=None))
    last = steps[-1].body
    history = project(load_history(tmp_path / "events.jsonl"))
    request = LLMRequest(
        model=last["model"],
        system=last["system"][0]["text"] if wire == "anthropic" else last["messages"][0]["content"],
        messages=tuple(history),
        tools=tuple(
            ToolSpec(name=t["name"], description=t["description"], parameters=t["input_schema"])
            if wire == "anthropic"
            else ToolSpec(
                name=t["function"]["name"],
                description=t["function"]["description"],
                parameters=t["function"]["parameters"],
            )
            for t in last["tools"]
        ),
        max_tokens=last.get("max_tokens"),
    )
    settings = ProviderSettings(kind=wire, model=last["model"])
    build = build_anthropic_body if wire == "anthropic" else build_openai_body
    resumed = Captured("step", build(request, settings))
    assert extends(steps[-1], resumed)
    assert len(resumed.body["messages"]) > len(last["messages"])  # the final answer came after
