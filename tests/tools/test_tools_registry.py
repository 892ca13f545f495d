"""The registry and the specs the model sees for the six built-in tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.tool_fakes import echo, make_tool
from tui_agent.tools import ToolRegistry, Workspace, default_registry


def test_the_default_registry_holds_the_six_built_ins(tmp_path: Path) -> None:
    registry = default_registry(Workspace(tmp_path))
    assert registry.names == ("read_file", "write_file", "edit_file", "glob", "grep", "shell")
    assert [spec.name for spec in registry.specs()] == list(registry.names)


@pytest.mark.parametrize(
    ("name", "required", "optional"),
    [
        ("read_file", ["path"], ["offset", "limit"]),
        ("write_file", ["path", "content"], []),
        ("edit_file", ["path", "old_string", "new_string"], ["replace_all"]),
        ("glob", ["pattern"], ["path"]),
        ("grep", ["pattern"], ["path", "glob", "ignore_case"]),
        ("shell", ["command"], ["timeout_s", "background", "sandbox"]),
    ],
)
def test_built_in_arguments_are_named_as_the_architecture_says(
    tmp_path: Path, name: str, required: list[str], optional: list[str]
) -> None:
    registry = default_registry(Workspace(tmp_path))
    spec = next(s for s in registry.specs() if s.name == name)
    schema = spec.parameters
    assert schema["type"] == "object"
    assert schema["required"] == required
    assert list(schema["properties"]) == required + optional
    assert schema["additionalProperties"] is False
    assert spec.description


def test_optional_arguments_show_their_plain_type_without_titles(tmp_path: Path) -> None:
    spec = next(s for s in default_registry(Workspace(tmp_path)).specs() if s.name == "read_file")
    offset = spec.parameters["properties"]["offset"]
    assert offset["type"] == "integer"
    assert "anyOf" not in offset and "title" not in offset
    assert "title" not in spec.parameters


def test_a_duplicate_name_is_refused() -> None:
    registry = ToolRegistry([make_tool("echo", echo)])
    with pytest.raises(ValueError, match='"echo" is already registered'):
        registry.register(make_tool("echo", echo))


def test_get_finds_a_tool_by_name_or_gives_none() -> None:
    tool = make_tool("echo", echo)
    registry = ToolRegistry([tool])
    assert registry.get("echo") is tool
    assert registry.get("missing") is None
    assert "echo" in registry and len(registry) == 1
