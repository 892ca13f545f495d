"""Rich's Markdown as the transcript draws it, and the parser that cuts text into blocks.

Imported when the first Markdown is parsed or drawn (`widgets/markdown_view.py`), not with the
app: markdown-it, Rich's Markdown and Pygments under it are 7 % of the imports to the first
frame, which shows no Markdown.
"""

from __future__ import annotations

from copy import copy
from typing import ClassVar

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import Heading, ListItem, Markdown
from rich.segment import Segment

CODE_THEME = "monokai"
# The parser Rich's Markdown uses (CommonMark with tables and strikethrough): blocks are cut
# where Rich would see them begin.
PARSER = MarkdownIt().enable("strikethrough").enable("table")


class _LeftHeading(Heading):
    """Headings start at the left edge, as the rest of the transcript does."""

    LEVEL_ALIGN: ClassVar = dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), "left")


class _ListItem(ListItem):
    """Numbered items read `1.`, as they were written, not `1`."""

    def render_number(
        self, console: Console, options: ConsoleOptions, number: int, last_number: int
    ) -> RenderResult:
        width = len(str(last_number)) + 3
        inner = options.update_width(options.max_width - width)
        lines = console.render_lines(self.elements, inner, style=self.style)
        style = console.get_style("markdown.item.number", default="none")
        for n, line in enumerate(lines):
            label = f"{number}.".rjust(width - 1) + " " if n == 0 else " " * width
            yield Segment(label, style)
            yield from line
            yield Segment.line()


class _Markdown(Markdown):
    elements: ClassVar = {
        **Markdown.elements,
        "heading_open": _LeftHeading,
        "list_item_open": _ListItem,
    }


# Rich's `Markdown` builds a parser for each instance, a third of the cost of drawing a short
# block; blocks are copies of this one, given the tokens `PARSER` made of their text.
_PROTOTYPE = _Markdown("", code_theme=CODE_THEME, hyperlinks=True)


def renderable(source: str, tokens: list[Token]) -> Markdown:
    block = copy(_PROTOTYPE)
    block.markup, block.parsed = source, _with_urls(tokens)
    return block


def _with_urls(tokens: list[Token]) -> list[Token]:
    """The tokens with each link's address written after its text, `text (url)`, unless the
    text is the address: the text is a hyperlink (OSC 8), but many terminals (and tmux before
    3.4) do not show those, and the person must see where a link goes."""
    shown: list[Token] = []
    for token in tokens:
        if token.type == "inline" and any(c.type == "link_open" for c in token.children or ()):
            token = copy(token)
            token.children = _urls_after_links(token.children or [])
        shown.append(token)
    return shown


def _urls_after_links(children: list[Token]) -> list[Token]:
    out: list[Token] = []
    href: str | None = None  # inside a link: its address
    words: list[str] = []
    for child in children:
        out.append(child)
        if child.type == "link_open":
            href, words = str(child.attrs.get("href", "")), []
        elif child.type == "link_close" and href is not None:
            text = "".join(words)
            if href and href not in (text, f"mailto:{text}"):
                out.append(Token("text", "", 0, content=f" ({href})"))
            href = None
        elif href is not None:
            words.append(child.content)
    return out
