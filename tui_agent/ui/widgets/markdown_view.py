"""Streaming Markdown drawn by one widget through Textual's line API.

Textual's `Markdown` widget is a tree of widgets (one per paragraph, list item, table cell
group, fence), and every append re-mounts the last of them and re-arranges the whole screen:
measured here at about 1 ms of CPU per character streamed and 25–45 ms per frame, so a key
typed during a long answer waited behind it. `MarkdownView` keeps the text as a list of
top-level Markdown blocks instead, each drawn once by Rich into lines at the widget's width;
an append only marks the last block (the one that can still change) for drawing again, and
the drawing happens once per frame, when Textual asks for the height or a line. So a frame
costs the same however long the answer is, and an answer drawn from its whole text (a resumed
session) is cut into the same blocks, and looks the same, as one that streamed in. The
answers a resumed session is about to show can be cut and drawn beforehand, a block at a time
between turns of the event loop (`draw_ahead`); their views then take those lines.
"""

from __future__ import annotations

import asyncio
from itertools import pairwise
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from tui_agent.ui._textual_hooks import PaintNowScreen
from tui_agent.ui.widgets.one_layout import LaidOutOnce

if TYPE_CHECKING:  # markdown-it and Rich's Markdown load with the first block (`_parser`)
    from markdown_it import MarkdownIt
    from markdown_it.token import Token
    from rich.markdown import Markdown


def _parser() -> MarkdownIt:
    """The parser Rich's Markdown uses, loaded with Rich's Markdown at the first block."""
    from tui_agent.ui.widgets.markdown_blocks import PARSER

    return PARSER


# Blocks drawn before any view shows them (`draw_ahead`), by source, width and style: their
# lines, once for each time the block occurs, each taken (and so dropped) by a view that draws
# it.
_ahead: dict[tuple[str, int, Style], list[list[Strip]]] = {}
# The same texts cut into blocks (`split_blocks`), taken by the view made with that text.
_cut_ahead: dict[str, list[str]] = {}


async def draw_ahead(
    console: Console,
    options: ConsoleOptions,
    texts: list[str],
    widths: tuple[int, ...],
    style: Style,
) -> int:
    """Finished `texts` cut into blocks and each block drawn by Rich (on the app's `console`
    with its `options`) at each of `widths` in `style` (the views' own), a block at a time with
    a turn of the event loop between, for the views about to show them (a resumed session's
    last answers): the frames that lay those out then only read lines. A code block's Pygments
    lexer is compiled before its first use, in a thread (a lexer's first use is tens of
    milliseconds of CPU), which the event loop shares through the interpreter's switch
    interval. Returns how many blocks Rich drew."""
    _ahead.clear()  # what an earlier call drew and no view took
    _cut_ahead.clear()
    await asyncio.to_thread(_parser)  # its first call imports Rich's Markdown: 40 ms of CPU
    languages: set[str] = {""}  # those compiled ("": no lexer)
    drawn = 0
    for text in texts:
        _cut_ahead[text] = blocks = split_blocks(text)
        await asyncio.sleep(0)
        for source in filter(str.strip, blocks):
            tokens = _parser().parse(source)
            named = {t.info.partition(" ")[0] for t in tokens if t.type == "fence"} - languages
            if named:
                await asyncio.to_thread(_compile_lexers, named)
                languages |= named
            for width in widths:
                copies = _ahead.setdefault((source, width, style), [])
                if copies:  # the same block again (a list item or a rule that recurs)
                    copies.append(copies[0])
                    continue
                lines = _rich_lines(console, options, source, width, tokens)
                copies.append(_styled(lines, width, style))
                drawn += 1
                await asyncio.sleep(0)
    return drawn


def _compile_lexers(names: set[str]) -> None:
    """Each named lexer made once, as Rich's code blocks find theirs: Pygments compiles a lexer
    class's rules at its first use and keeps them on the class. An unknown name is no lexer
    (Rich draws that block as plain text)."""
    from rich.syntax import Syntax  # loaded with rich.markdown already

    for name in names:
        _ = Syntax("", name).lexer


def _rich_lines(
    console: Console, options: ConsoleOptions, source: str, width: int, tokens: list[Token]
) -> list[list[Segment]]:
    """One block's lines as Rich draws it at `width`, without the blank lines around it.

    Rich puts blank lines of its own around some blocks (lists, tables) and not others:
    they are dropped, so every block is one blank line from the next (`MarkdownView._draw`)."""
    at_width = options.update(width=width, height=None, highlight=False)
    segments = console.render(_renderable(source, tokens), at_width)
    lines = list(Segment.split_and_crop_lines(segments, width, include_new_lines=False))
    while lines and _blank(lines[-1]):
        lines.pop()
    start = next((n for n, line in enumerate(lines) if not _blank(line)), len(lines))
    return lines[start:]


def _styled(lines: list[list[Segment]], width: int, style: Style) -> list[Strip]:
    """Rich's lines in a view's style, each as wide as the view."""
    return [
        Strip(Segment.adjust_line_length(list(Segment.apply_style(line, style)), width, style))
        for line in lines
    ]


def _renderable(source: str, tokens: list[Token]) -> Markdown:
    from tui_agent.ui.widgets.markdown_blocks import renderable

    return renderable(source, tokens)


def split_blocks(text: str) -> list[str]:
    """`text` cut just before each top-level Markdown block after the first, losslessly (the
    pieces join back into `text`); blank lines stay with the block before them."""
    return _parse_blocks(text)[0]


def _parse_blocks(text: str) -> tuple[list[str], list[Token]]:
    """`split_blocks`, and the tokens of the whole text."""
    tokens = _parser().parse(text)
    lines = text.splitlines(keepends=True)
    starts = sorted(
        {
            token.map[0]
            for token in tokens
            if token.level == 0 and token.nesting >= 0 and token.map and token.map[0] > 0
        }
    )
    bounds = [0, *starts, len(lines)]
    return ["".join(lines[a:b]) for a, b in pairwise(bounds) if b > a], tokens


def _blank(line: list[Segment]) -> bool:
    """Nothing shows on the line (a code block's padding, which has a background, shows)."""
    return all(
        not segment.text.strip() and not (segment.style and segment.style.bgcolor)
        for segment in line
    )


class MarkdownView(LaidOutOnce, Widget):
    """Markdown that grows at its end (`append`), drawn block by block and cached per width.

    The blocks before the last are settled: later text cannot change them, so each is drawn
    once. The last block is drawn again only when it changed and a frame needs it. Text can be
    selected and copied like any other text in the app.
    """

    DEFAULT_CSS = "MarkdownView { height: auto; }"

    def __init__(self, text: str = "", *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        # A text `draw_ahead` cut already is not parsed whole again here.
        *settled, tail = _cut_ahead.pop(text, None) or [text]
        self._settled: list[str] = settled  # sources of the blocks that can no longer change
        self._tail = tail  # the rest: the last block, not cut into blocks yet if it grew
        self.length = len(text)  # characters of text it holds
        self._settled_lines: list[Strip] = []  # the settled blocks drawn, in order
        self._drawn = 0  # how many settled blocks `_settled_lines` holds
        self._tail_lines: list[Strip] | None = None  # None: it grew, or the width or style changed
        self._key: tuple[int, Style] | None = None  # the width and style they were drawn at
        self._style: Style | None = None  # `rich_style` walks the ancestors: read it once
        self.blocks_drawn = 0  # blocks drawn so far (a frame should draw one, not all)
        self._tail_chars = 0  # characters of the text in the lines drawn last
        self.drawn_chars = 0  # characters of the text in the lines painted last
        self._after_key = False  # the drawing waits for the frame after a key (`on_idle`)

    @property
    def source(self) -> str:
        return "".join(self._settled) + self._tail

    @property
    def blocks(self) -> list[str]:
        """The text cut into blocks as drawn so far (the last may grow)."""
        return [*self._settled, self._tail]

    def append(self, fragment: str) -> None:
        if not fragment:
            return
        self._tail += fragment
        self.length += len(fragment)
        self._tail_lines = None
        # Only the last block's lines can change: they alone are painted again, every other
        # line comes from Textual's cache (see `_size_updated`). Lines it gains below are new;
        # whether it gains any is known once drawn (`on_idle`).
        top = len(self._settled_lines)
        width, height = self.content_size
        if height > top:
            self.refresh(Region(0, top, width, height - top))
        else:
            self.refresh(layout=True, repaint=False)

    def on_idle(self) -> None:
        """Before Textual hands the screen this widget's repaint (its own idle handler runs
        after this one): draw what the appends changed and ask for a layout only if the height
        changed. A layout re-arranges the whole screen and, under an answer that follows the
        tail, repaints every line shown; most appends only lengthen the last line.

        While a key is on its way the key goes first: the drawing waits for the frame after
        the key's echo (`PaintNowScreen`), and is done then if that frame did not do it."""
        width, height = self.content_size
        if self._tail_lines is None and width:
            screen = self.screen
            if isinstance(screen, PaintNowScreen) and screen.input_waiting():
                if not self._after_key:
                    self._after_key = True
                    self.call_after_refresh(self._draw_after_key)
                return
            settled, tail = self._lines(width)
            if len(settled) + len(tail) != height:
                self.refresh(layout=True, repaint=False)

    def _draw_after_key(self) -> None:
        self._after_key = False
        if self.is_attached:
            self.on_idle()

    # ------------------------------------------------------------ drawing

    def _lines(self, width: int) -> tuple[list[Strip], list[Strip]]:
        """The settled lines and the last block's lines at `width`, drawing what is missing."""
        if self._style is None:
            self._style = self.rich_style
        key = (width, self._style)
        if key != self._key:
            self._key = key
            self._settled_lines, self._drawn, self._tail_lines = [], 0, None
        tail_tokens = None  # the last block's tokens, when its parse was the whole tail's
        if self._tail_lines is None:
            pieces, tokens = _parse_blocks(self._tail)
            *settled, self._tail = pieces or [""]
            self._settled += settled
            tail_tokens = None if settled else tokens
        while self._drawn < len(self._settled):
            source = self._settled[self._drawn]
            self._settled_lines += self._draw(source, *key, first=self._drawn == 0)
            self._drawn += 1
        if self._tail_lines is None:
            self._tail_lines = self._draw(
                self._tail, *key, first=not self._settled, tokens=tail_tokens
            )
            self._tail_chars = self.length
        return self._settled_lines, self._tail_lines

    def _draw(
        self,
        source: str,
        width: int,
        style: Style,
        *,
        first: bool,
        tokens: list[Token] | None = None,
    ) -> list[Strip]:
        """One block at the current width (drawn by Rich unless `draw_ahead` did), after a
        blank line unless first."""
        if not source.strip():
            return []
        copies = _ahead.get((source, width, style))
        if copies:
            strips = copies.pop()
            if not copies:
                del _ahead[(source, width, style)]
        else:
            self.blocks_drawn += 1
            parsed = _parser().parse(source) if tokens is None else tokens
            lines = _rich_lines(self.app.console, self.app.console_options, source, width, parsed)
            strips = _styled(lines, width, style)
        return strips if first else [Strip.blank(width, style), *strips]

    def repaint_on_resize(self, old: Size, new: Size) -> bool:
        # Textual paints a widget whole when its size changes. At the same width, with no
        # padding or border to move, a taller or shorter view has the same lines above its end,
        # and `append` has asked for those that changed: a long answer would otherwise paint
        # every line it shows at each frame that gave it a line.
        return new.width != old.width or any(self.styles.gutter)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        settled, tail = self._lines(width)
        return len(settled) + len(tail)

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        settled, tail = self._lines(width)
        self.drawn_chars = self._tail_chars
        if y < len(settled):
            strip = settled[y]
        elif y - len(settled) < len(tail):
            strip = tail[y - len(settled)]
        else:
            return Strip.blank(width, self._style)
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(y)) is not None:
            strip = self._highlight(strip, *span)
        return strip.apply_offsets(0, y)

    def _highlight(self, strip: Strip, start: int, end: int) -> Strip:
        end = strip.cell_length if end == -1 else end
        style = self.screen.get_component_rich_style("screen--selection")
        middle = Segment.apply_style(strip.crop(start, end), post_style=style)
        return Strip.join([strip.crop(0, start), Strip(middle), strip.crop(end)])

    def notify_style_update(self) -> None:
        self._style = None  # drawn again in the new style
        super().notify_style_update()

    # ------------------------------------------------------------ selection

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        settled, tail = self._lines(self.content_size.width)
        text = "\n".join(strip.text.rstrip() for strip in [*settled, *tail])
        return selection.extract(text), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()
