"""How a tool call is presented, by the tool's name, for the front ends and the system prompt.

Each built-in tool declares its `ToolFacts` on its class (its module owns them); this module only
finds them by name, so the UI and ACP, which never import the tools, read the same facts. A tool
that is not built in (an MCP server's) gets the defaults. The tool classes are imported on the
first question, not with this module: the app draws its first frame before the tools load.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from tui_agent.vocab import ToolFacts

if TYPE_CHECKING:
    from tui_agent.tools import Tool

_PLAIN = ToolFacts()


def tool_facts(name: str) -> ToolFacts:
    return _builtin().get(name, _PLAIN)


@cache
def _builtin() -> dict[str, ToolFacts]:
    from tui_agent.loop.subagent import Task
    from tui_agent.tools import BUILTIN_TOOLS, SkillTool, WebFetch, WebSearch

    # The web tools and `skill` are built from config and the skills found (they are not in the
    # default registry) but are ours.
    classes: tuple[type[Tool[Any]], ...] = (*BUILTIN_TOOLS, Task, WebFetch, WebSearch, SkillTool)
    return {tool.name: tool.facts for tool in classes}
