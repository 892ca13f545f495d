"""How a pane keeps up with the view model: it listens itself and redraws once per burst.

A pane names the parts of the view model it shows (`PaneChanged.pane` values). A change to one
of them, or a `Reset`, schedules one redraw on the pane's own message queue; the changes that
come before that redraw runs cost nothing more, so a burst of loop events costs one redraw. The
app never pushes refreshes into panes, and a new pane needs no line outside its own module but
the one that places it (`MainScreen.compose`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from textual.message_pump import MessagePump

from tui_agent.ui.state import Change, PaneChanged, Reset
from tui_agent.ui.view_model import ViewModel


class FollowsViewModel:
    """Calls `redraw` (on `owner`'s queue, while it is attached) once per burst of changes to
    the parts named in `shows` (None: to any part)."""

    def __init__(
        self,
        owner: MessagePump,
        vm: ViewModel,
        shows: Iterable[str] | None,
        redraw: Callable[[], object],
    ) -> None:
        self._owner = owner
        self._shows = None if shows is None else frozenset(shows)
        self._redraw = redraw
        self._pending = False
        self.stop = vm.listen(self._changed)  # call it when the owner goes away

    def _changed(self, change: Change) -> None:
        # Called for every change, streamed text included: the cheap test first.
        if self._pending:
            return
        if isinstance(change, PaneChanged):
            if self._shows is not None and change.pane not in self._shows:
                return
        elif not isinstance(change, Reset):
            return
        self._pending = True
        self._owner.call_later(self._run)

    def _run(self) -> None:
        self._pending = False
        if self._owner.is_attached:  # not while the app shuts down
            self._redraw()
