"""`prefix_break`: which change to a request costs the provider's prompt cache, and why."""

from __future__ import annotations

import logging

import pytest

from tui_agent.context import PrefixWatch, prefix_break
from tui_agent.vocab import LLMRequest, Message, TextPart, ToolSpec, user_message

TOOL = ToolSpec(name="read_file", description="Read.", parameters={"type": "object"})
FIRST = LLMRequest(model="m", system="Be careful.", tools=(TOOL,), messages=(user_message("hi"),))


def test_appending_messages_keeps_the_prefix() -> None:
    later = FIRST.model_copy(
        update={
            "messages": (
                *FIRST.messages,
                Message(role="assistant", content=(TextPart(text="hello"),)),
                user_message("go"),
            )
        }
    )
    assert prefix_break(FIRST, later) is None
    assert prefix_break(FIRST, FIRST) is None  # a retry sends the same request


def test_a_changed_system_prompt_tool_table_or_history_is_a_break() -> None:
    planning = FIRST.model_copy(update={"system": "Be careful.\n\nPlan only."})
    more_tools = FIRST.model_copy(update={"tools": (TOOL, TOOL.model_copy(update={"name": "x"}))})
    rewritten = FIRST.model_copy(update={"messages": (user_message("summary"),)})
    reasons = [prefix_break(FIRST, later) for later in (planning, more_tools)]
    assert [found.reason if found else None for found in reasons] == [
        "system prompt changed",
        "tool table changed",
    ]
    found = prefix_break(FIRST, rewritten)
    assert found is not None and (found.reason, found.kept, found.previous) == (
        "history rewritten",
        0,
        1,
    )


def test_the_watch_logs_each_break_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="tui_agent.context.prefix")
    watch = PrefixWatch()
    rewritten = FIRST.model_copy(update={"messages": (user_message("summary"),)})
    assert watch.see(FIRST) is None
    assert watch.see(FIRST) is None
    assert watch.see(rewritten) is not None
    assert watch.see(rewritten) is None
    assert [r.getMessage()[:40] for r in caplog.records] == [
        "prompt prefix broken (history rewritten)"
    ]
