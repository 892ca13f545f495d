"""A tool's presentation (title, kind, primary argument, advice) is declared on its class and
found by name, so adding a built-in tool touches its module and the registry only."""

from __future__ import annotations

from pathlib import Path

from tui_agent.loop.subagent import Task
from tui_agent.loop.tool_facts import tool_facts
from tui_agent.session import build_system_prompt
from tui_agent.tools import BUILTIN_TOOLS, Workspace, default_registry
from tui_agent.vocab import ToolFacts


def test_every_built_in_tool_is_listed_where_its_facts_are_found(tmp_path: Path) -> None:
    offered = {type(tool) for tool in default_registry(Workspace(tmp_path))}
    assert offered <= set(BUILTIN_TOOLS)
    for tool in (*BUILTIN_TOOLS, Task):
        assert tool_facts(tool.name) is tool.facts


def test_front_ends_and_the_prompt_read_the_tool_classes_own_facts() -> None:
    facts = tool_facts("shell")
    assert (facts.kind, facts.title("shell", {"command": "make test\nmore"})) == (
        "execute",
        "Run make test",
    )
    assert tool_facts("todo_write").title("todo_write", {}) == "Update the plan"
    prompt = build_system_prompt("/ws", [], ["shell", "mcp__srv__x"])
    assert f"- {facts.advice}" in prompt and facts.advice.startswith("shell:")


def test_a_tool_that_declares_nothing_gets_plain_facts() -> None:
    assert tool_facts("mcp__srv__lookup") == ToolFacts()
    assert ToolFacts().title("mcp__srv__lookup", {"path": "x"}) == "mcp__srv__lookup"


def test_the_skill_tool_is_titled_with_the_skill_it_opens() -> None:
    assert tool_facts("skill").title("skill", {"name": "release"}) == "Use skill release"
