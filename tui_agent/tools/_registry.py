"""The tools a session offers, by name, the specs the model is given, and the built-in set."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from tui_agent.tools._base import Tool
from tui_agent.tools._files import EditFile, ReadFile, WriteFile
from tui_agent.tools._search import Glob, Grep
from tui_agent.tools._shell import Shell
from tui_agent.tools._workspace import Workspace
from tui_agent.vocab import ToolSpec


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool[Any]] = ()) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool[Any]) -> None:
        if tool.name in self._tools:
            raise ValueError(f'A tool named "{tool.name}" is already registered.')
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    def specs(self) -> list[ToolSpec]:
        return [tool.spec() for tool in self._tools.values()]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool[Any]]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)


def default_registry(workspace: Workspace) -> ToolRegistry:
    """The six built-in tools, confined to `workspace`."""
    return ToolRegistry(
        [
            ReadFile(workspace),
            WriteFile(workspace),
            EditFile(workspace),
            Glob(workspace),
            Grep(workspace),
            Shell(workspace),
        ]
    )
