"""What a terminal would show: the app's frames applied to a grid of cells.

Textual's headless driver writes nothing, and rendering the screen afresh
(`render_strips`) shows what the widgets would draw now, not what was sent. A test that
checks a partial repaint (only the lines that changed are sent) needs the cells as the
frames left them: a line that was not sent again keeps what an earlier frame wrote.
"""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.segment import ControlType
from textual._compositor import CompositorUpdate
from textual.app import App
from textual.geometry import Region
from textual.screen import Screen

Cell = tuple[str, str]  # a character and its style


class Terminal:
    """Attach to a running app (`run_test`) to record the frames it sends from then on."""

    def __init__(self, app: App[Any]) -> None:
        width, height = app.size
        self.app = app
        self.rows: list[list[Cell]] = [[(" ", "")] * width for _ in range(height)]
        display = app._display

        def record(screen: Screen[Any], renderable: RenderableType | None) -> None:
            if isinstance(renderable, CompositorUpdate) and not app._batch_count:
                self._apply(renderable)
            display(screen, renderable)

        app._display = record  # type: ignore[method-assign]

    def _apply(self, update: CompositorUpdate) -> None:
        console = self.app.console
        x = y = 0
        for segment in update.__rich_console__(console, console.options):
            if segment.control:
                for code in segment.control:
                    if code[0] is ControlType.CURSOR_MOVE_TO:
                        x, y = int(code[1]), int(code[2])
                continue
            if segment.text == "\n":
                continue
            for char in segment.text:
                if 0 <= y < len(self.rows) and 0 <= x < len(self.rows[y]):
                    self.rows[y][x] = (char, str(segment.style))
                x += 1

    def cells(self, region: Region) -> list[list[Cell]]:
        return [row[region.x : region.right] for row in self.rows[region.y : region.bottom]]

    def text(self, region: Region) -> list[str]:
        return ["".join(char for char, _ in row).rstrip() for row in self.cells(region)]
