"""How `MarkdownView` cuts text into blocks: losslessly, and so that a block settled while the
text streamed is the block the whole text has there (what a streamed and a redrawn answer share)."""

from __future__ import annotations

from tests.ui.test_delivery import long_answer
from tui_agent.ui.widgets.markdown_view import split_blocks

TEXT = (
    long_answer()
    + "1. first\n2. second\n\n   still the second\n\n> quoted\nlazy line\n\nTitle\n=====\n\n"
    + "```\nfence\n\nwith a blank line\n```\n\n---\n\nlast words"
)


def test_blocks_join_back_into_the_text() -> None:
    blocks = split_blocks(TEXT)
    assert "".join(blocks) == TEXT
    assert "```\nfence\n\nwith a blank line\n```\n\n" in blocks
    assert "Title\n=====\n\n" in blocks
    assert "1. first\n2. second\n\n   still the second\n\n" in blocks


def test_blocks_settled_while_streaming_are_the_blocks_of_the_whole_text() -> None:
    whole = split_blocks(TEXT)
    for size in (1, 7, 50):
        settled: list[str] = []
        tail = ""
        for start in range(0, len(TEXT), size):
            *done, tail = split_blocks(tail + TEXT[start : start + size])
            settled += done
        assert [*settled, tail] == whole


def test_no_text_is_no_block() -> None:
    assert split_blocks("") == []
