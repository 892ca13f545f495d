"""The tools a session offers, by name, the specs the model is given, and the built-in set.

Besides the tools registered once, a registry asks its sources (the MCP servers of a loop),
whose tools come and go while the session runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from tui_agent.tools._base import Tool
from tui_agent.tools._edits import EditFile, WriteFile
from tui_agent.tools._files import EditorFiles, ReadFile
from tui_agent.tools._plan_mode import ExitPlanMode
from tui_agent.tools._sandbox import UNSANDBOXED, Sandbox
from tui_agent.tools._search import Glob, Grep
from tui_agent.tools._shell import Shell
from tui_agent.tools._terminal import EditorTerminal
from tui_agent.tools._todo import TodoWrite
from tui_agent.tools._workspace import Workspace
from tui_agent.vocab import ToolSpec


class ToolSource(Protocol):
    """Tools that change at run time, looked up after the registered ones."""

    def get(self, name: str) -> Tool[Any] | None: ...

    def tools(self) -> Sequence[Tool[Any]]: ...


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool[Any]] = ()) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        self._sources: list[ToolSource] = []
        for tool in tools:
            self.register(tool)

    def add_source(self, source: ToolSource) -> None:
        self._sources.append(source)

    def register(self, tool: Tool[Any]) -> None:
        if tool.name in self._tools:
            raise ValueError(f'A tool named "{tool.name}" is already registered.')
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool[Any] | None:
        tool = self._tools.get(name)
        for source in self._sources:
            if tool is not None:
                break
            tool = source.get(name)
        return tool

    def specs(self) -> list[ToolSpec]:
        return [tool.spec() for tool in self]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[Tool[Any]]:
        yield from self._tools.values()
        for source in self._sources:
            yield from source.tools()

    def __len__(self) -> int:
        return len(self._tools) + sum(len(source.tools()) for source in self._sources)


# Every built-in tool class, for what is read from the class alone (`Tool.facts`: titles, kinds,
# advice); each loop registers its own instances (`default_registry`, and the loop's plan tools).
BUILTIN_TOOLS: tuple[type[Tool[Any]], ...] = (
    ReadFile,
    WriteFile,
    EditFile,
    Glob,
    Grep,
    Shell,
    TodoWrite,
    ExitPlanMode,
)


def default_registry(
    workspace: Workspace,
    files: EditorFiles | None = None,
    sandbox: Sandbox = UNSANDBOXED,
    terminal: EditorTerminal | None = None,
) -> ToolRegistry:
    """The six built-in tools, confined to `workspace`; with `files`, the file tools read and
    write through an editor (its unsaved buffers included) instead of the disk; commands run
    in `sandbox`, in the editor's `terminal` when there is one."""
    return ToolRegistry(
        [
            ReadFile(workspace, files),
            WriteFile(workspace, files),
            EditFile(workspace, files),
            Glob(workspace),
            Grep(workspace),
            Shell(workspace, sandbox, terminal),
        ]
    )
