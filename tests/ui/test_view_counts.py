"""What a tool row says about a call is true: line counts of the file or the whole output, a
plan update as a count of todos, a search as its pattern; an answer's links show their address."""

from __future__ import annotations

import json

from rich.console import Console

from tests.ui.fake_loop import INFO
from tui_agent.loop import events as ev
from tui_agent.ui.view_model import ToolBlock, ViewModel
from tui_agent.ui.widgets.markdown_blocks import PARSER, renderable


def finished(name: str, arguments: dict[str, object], output: str, **extra: object) -> ToolBlock:
    vm = ViewModel(INFO, clock=lambda: 100.0)
    vm.apply(ev.ToolStarted(id="c1", name=name, arguments=json.dumps(arguments)))
    vm.apply(
        ev.ToolFinished(
            id="c1", name=name, outcome="succeeded", output=output, is_error=False, **extra
        )  # type: ignore[arg-type]
    )
    (block,) = vm.blocks
    assert isinstance(block, ToolBlock)
    return block


def test_a_read_of_twenty_lines_counts_twenty_not_its_note() -> None:
    numbered = "\n".join(f"{n:>6}\tline {n}" for n in range(1, 21))
    note = "\n\n[Showing lines 1-20 of big.txt (9000 bytes); the file goes on. Read more …]"
    block = finished("read_file", {"path": "big.txt", "limit": 20}, numbered + note)
    assert block.line_count == "20 lines"


def test_a_spilled_output_counts_the_lines_of_the_whole_output() -> None:
    pointer = "Tool output exceeded 50000 characters; it was cut for the context.\n" * 1195
    block = finished(
        "shell",
        {"command": "seq 1 200000"},
        pointer,
        display={"command": "seq 1 200000", "exit_code": 0, "output_lines": 200_001},
    )
    assert block.line_count == "200,001 lines, saved whole to a file"


def test_a_todo_write_row_says_how_the_plan_stands() -> None:
    todos = [
        {"content": "read", "status": "completed"},
        {"content": "fix", "status": "in_progress"},
        {"content": "test", "status": "pending"},
    ]
    block = finished("todo_write", {"todos": todos}, "Plan updated.")
    assert block.summary == "3 todos: 1 done, 1 in progress, 1 pending"
    assert "content" not in block.detail


def test_a_grep_row_shows_its_pattern_and_where_it_searched() -> None:
    block = finished("grep", {"pattern": "TODO", "path": "src", "glob": "*.py"}, "")
    assert block.summary == "TODO in src"
    assert block.detail == "TODO in src · glob='*.py'"
    assert finished("grep", {"pattern": "def main"}, "").summary == "def main"


def rendered(markdown: str) -> str:
    console = Console(width=100, color_system=None)
    with console.capture() as captured:
        console.print(renderable(markdown, PARSER.parse(markdown)))
    return captured.get()


def test_a_link_shows_its_address_after_its_text() -> None:
    text = rendered("See [the docs](https://example.com/docs) and <https://example.org>.")
    assert "the docs (https://example.com/docs)" in text
    assert "https://example.org." in text and "(https://example.org)" not in text
