"""How `MarkdownView` cuts text into blocks: losslessly, and so that a block settled while the
text streamed is the block the whole text has there (what a streamed and a redrawn answer share);
and how it paints while the text streams."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.geometry import Region
from textual.strip import Strip

from tests.ui.real_loop import until
from tests.ui.terminal import Terminal
from tests.ui.test_delivery import long_answer
from tui_agent.ui.widgets.markdown_view import MarkdownView, split_blocks

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


# ---------------------------------------------------------------- painting while it streams

# Text whose last block changes above its last line as it grows: a paragraph that becomes a
# heading, table rows that widen when a longer cell arrives, a fence whose colours change when a
# string opens, a list that gains items.
CHANGING = (
    "An opening paragraph long enough to wrap across a few lines of the narrow column.\n\n"
    "Title\n=====\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n| a much longer cell | 3 |\n\n"
    '```python\nvalue = 1\ntext = "open string\nmore = 2\n```\n\n'
    "- one\n- two\n  - nested\n- three\n\nlast words"
)


class SideBySide(App[None]):
    """A view that streams on the left, one drawn from the same text afresh on the right."""

    CSS = "Horizontal > * { width: 1fr; height: auto; }"

    def __init__(self) -> None:
        super().__init__()
        self.streamed = MarkdownView()
        self.fresh = Vertical()

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield self.streamed
            yield self.fresh


async def test_what_reaches_the_terminal_while_streaming_is_what_a_fresh_view_draws() -> None:
    # Only the last block's lines are painted again at each append (the rest come from
    # Textual's cache, also when the height changes): what the terminal shows must still be
    # what the whole text drawn afresh shows, after every piece.
    app = SideBySide()
    async with app.run_test(size=(80, 50)) as pilot:
        terminal = Terminal(app)
        streamed, fresh = app.streamed, app.fresh
        left, right = Region(0, 0, 40, 50), Region(40, 0, 40, 50)
        for end in range(4, len(CHANGING) + 4, 4):
            streamed.append(CHANGING[end - 4 : end])
            await fresh.remove_children()
            view = MarkdownView(CHANGING[:end])
            await fresh.mount(view)

            def painted(view: MarkdownView = view) -> bool:
                """The fresh view is on the terminal, and the streamed one shows the same."""
                lines = [view.render_line(y).text.rstrip() for y in range(view.size.height)]
                on_screen = terminal.text(right)[: len(lines)]
                return (
                    bool(lines)
                    and on_screen == lines
                    and terminal.cells(left) == terminal.cells(right)
                )

            await until(pilot, painted)
        assert "last words" in terminal.text(left)


async def test_an_append_paints_only_the_last_block_again() -> None:
    app = SideBySide()
    async with app.run_test(size=(80, 50)) as pilot:
        streamed = app.streamed
        streamed.append("First paragraph.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nThe last one")
        await until(pilot, lambda: streamed.drawn_chars == streamed.length)
        await pilot.pause()
        rows = [streamed.render_line(y).text for y in range(streamed.size.height)]
        top = rows.index(next(row for row in rows if row.startswith("The last one")))
        asked: list[int] = []
        render_line = streamed.render_line

        def counted(y: int) -> Strip:
            asked.append(y)
            return render_line(y)

        streamed.render_line = counted  # type: ignore[method-assign]
        streamed.append(" grows, and grows onto a second line of the forty-column view.")
        await until(pilot, lambda: streamed.drawn_chars == streamed.length)
        await pilot.pause()
        assert asked, "the new text was not painted"
        assert min(asked) >= top - 1, asked  # its line, and the blank line above it


async def test_an_append_that_adds_no_line_lays_nothing_out() -> None:
    # A layout re-arranges the whole screen and, under an answer that follows the tail,
    # scrolls and repaints every line shown: most appends only lengthen the last line and
    # need none (a key typed meanwhile waited behind such a frame).
    app = SideBySide()
    async with app.run_test(size=(80, 50)) as pilot:
        streamed = app.streamed
        streamed.append("A paragraph")
        await until(pilot, lambda: streamed.drawn_chars == streamed.length)
        await pilot.pause()
        layouts: list[object] = []
        original = app.screen._refresh_layout

        def counted(size: object = None, scroll: bool = False) -> None:
            layouts.append(size)
            original(size, scroll)  # type: ignore[arg-type]

        app.screen._refresh_layout = counted  # type: ignore[method-assign]
        height = streamed.size.height
        streamed.append(" that grows")
        await until(pilot, lambda: "that grows" in streamed.render_line(0).text)
        await pilot.pause()
        assert layouts == []
        assert streamed.size.height == height
        streamed.append(" onto a second line of the forty-column view, and on.")
        await until(pilot, lambda: streamed.size.height == height + 1)
        assert len(layouts) == 1
        assert "and on." in streamed.render_line(1).text
