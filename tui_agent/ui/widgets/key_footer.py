"""The footer of key bindings, redrawn at most once per screen refresh.

Textual's `Footer` schedules a full recompose for every bindings change, and start-up changes
the bindings several times before the first frame (focus, panes shown or hidden, the footer's
own greying): each recompose mounts a key widget per binding and restyles it twice. Coalescing
the changes of one refresh into one recompose draws the same footer for a fraction of the work.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer

from tui_agent.ui._textual_hooks import set_bindings_ready


class KeyFooter(Footer):
    _recompose_pending = False

    def bindings_changed(self, screen: Screen[object]) -> None:
        set_bindings_ready(self)
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._recompose_pending:
            self._recompose_pending = True
            self.call_after_refresh(self._recompose_once)

    async def _recompose_once(self) -> None:
        self._recompose_pending = False
        await self.recompose()
