"""The footer of key bindings, redrawn at most once per screen refresh, and only when the keys
it shows changed.

Textual's `Footer` schedules a full recompose for every bindings change, and start-up changes
the bindings several times before the first frame (focus, panes shown or hidden, the footer's
own greying): each recompose mounts a key widget per binding and restyles it twice. Coalescing
the changes of one refresh into one recompose draws the same footer for a fraction of the work,
and a change that leaves the same keys (a turn's start and end announce several; two in five
change nothing the footer shows) draws nothing.

Each key a recompose mounts watches the footer's `compact` (Textual's `data_bind`), and Textual
forgets a removed key's watcher only when `compact` changes, which it never does here: every
recompose left its keys behind, alive, and made the next one's binding slower to set up (a
scan of all of them). Over a day of turns that was thousands of dead keys; the footer now drops
them after each recompose.

The keys are drawn from the footer's first compose, so the app's first frame shows them
(Textual's footer draws them two frames later, after a bindings change and a recompose). A
recompose the start-up's bindings changes still ask for may follow; the app waits for its keys
(`after_keys_drawn`) before it starts the work that follows its first frame, or that work
(imports on the event loop, worker threads holding the GIL) held the footer back for most of a
second.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from tui_agent.ui._textual_hooks import set_bindings_ready, start_compact

KeysShown: TypeAlias = tuple[tuple[Binding, bool, str], ...]


class KeyFooter(Footer):
    _recompose_pending = False
    _shown: KeysShown | None = None  # what the last compose drew from
    _recomposing = False
    _waiting: tuple[Callable[[], object], ...] = ()  # for the keys of a pending recompose

    def after_keys_drawn(self, callback: Callable[[], object]) -> None:
        """Call `callback` after the frame that shows the keys of the pending (or running)
        recompose, or after the next frame if there is none."""
        if self._recompose_pending or self._recomposing:
            self._waiting = (*self._waiting, callback)
        else:
            self.call_after_refresh(callback)

    def compose(self) -> ComposeResult:
        # The keys are drawn from the first compose, so the first frame shows them (Textual's
        # footer waits for a bindings change and a recompose: two frames later, after whatever
        # the app starts once it has drawn).
        set_bindings_ready(self)
        self._shown = keys_shown(self.screen)
        for widget in super().compose():
            start_compact(widget, self.compact)
            yield widget

    def bindings_changed(self, screen: Screen[object]) -> None:
        set_bindings_ready(self)
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._recompose_pending:
            self._recompose_pending = True
            self.call_after_refresh(self._recompose_once)

    async def _recompose_once(self) -> None:
        self._recompose_pending = False
        self._recomposing = True
        try:
            shown = keys_shown(self.screen)
            if shown == self._shown:
                return
            await self.recompose()
            # Calls `compact`'s watchers as if it had changed: Textual first drops those of
            # removed widgets (the old keys), then tells the new keys the value they already have.
            self.mutate_reactive(Footer.compact)
        finally:
            self._recomposing = False
            waiting, self._waiting = self._waiting, ()
            for callback in waiting:
                self.call_after_refresh(callback)


def keys_shown(screen: Screen[object]) -> KeysShown:
    """What `Footer.compose` draws from: each active binding, whether it is enabled, its tooltip."""
    bindings = screen.active_bindings.values()
    return tuple((binding, enabled, tooltip) for _, binding, enabled, tooltip in bindings)
