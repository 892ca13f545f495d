"""The app's screen, which paints what the user types at once.

Textual paints at most 60 frames a second: after a frame the next one waits for its slot, 16 to
33 ms later. While an answer streams every slot is taken, so a key's echo waited for the next
one, and for the stream's drawing in it (measured at 3,000 characters a second: 16 ms at the
median, against 4 ms with nothing streaming). Now the change a key makes to the focused widget,
which is where keys go, is painted as soon as the screen has nothing else queued instead. Only
a key's: a focused widget that redraws by itself (output streaming into it) keeps to the slots.

It hooks Textual's frame through `PaintNowScreen` (`ui/_textual_hooks.py`, where the private
names it needs are listed); `tests/ui/test_main_screen.py` fails if the hook stops painting.
"""

from __future__ import annotations

from textual.widget import Widget

from tui_agent.ui._textual_hooks import PaintNowScreen


class MainScreen(PaintNowScreen):
    """The screen the app composes into (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self._key_pending = False  # a key is on its way to the focused widget
        self._paint_now = False  # the focused widget asked for a repaint after a key

    def key_pressed(self) -> None:
        """The app received a key from the terminal."""
        self._key_pending = True

    def widget_updated(self, widget: Widget) -> None:
        if self._key_pending and widget is self.focused:
            self._key_pending = False
            self._paint_now = True

    def idle(self) -> None:
        if self._paint_now and self.is_current and not self.batching:
            self._paint_now = False
            self.paint_frame_now()  # the frame, without waiting for its slot
