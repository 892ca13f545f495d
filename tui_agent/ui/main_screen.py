"""The app's screen, which paints what the user types at once.

Textual paints at most 60 frames a second: after a frame the next one waits for its slot, 16 to
33 ms later. While an answer streams every slot is taken, so a key's echo waited for the next
one, and for the stream's drawing in it (measured at 3,000 characters a second: 16 ms at the
median, against 4 ms with nothing streaming). Now the change a key makes to the focused widget,
which is where keys go, is painted as soon as the screen has nothing else queued instead. Only
a key's: a focused widget that redraws by itself (output streaming into it) keeps to the slots.

It hooks Textual's frame (`_on_update`, `_on_idle`, `_on_timer_update`), which is why
`pyproject.toml` pins Textual's minor version; `tests/ui/test_main_screen.py` fails if the hook
stops painting.
"""

from __future__ import annotations

from textual import events, messages
from textual.screen import Screen


class MainScreen(Screen[None]):
    """The screen the app composes into (see the module)."""

    def __init__(self) -> None:
        super().__init__(id="_default")
        self._key_pending = False  # a key is on its way to the focused widget
        self._paint_now = False  # the focused widget asked for a repaint after a key

    def key_pressed(self) -> None:
        """The app received a key from the terminal."""
        self._key_pending = True

    # Textual calls these handlers for each class of the screen, this one first; Screen's own
    # run after them (so neither calls `super()`).

    async def _on_update(self, message: messages.Update) -> None:
        if self._key_pending and message.widget is self.focused:
            self._key_pending = False
            self._paint_now = True

    async def _on_idle(self, event: events.Idle) -> None:
        if self._paint_now and self.is_current and not self.app._batch_count:
            self._paint_now = False
            self._on_timer_update()  # the frame, without waiting for its slot
