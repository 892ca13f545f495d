"""Every place the UI reaches into Textual's private surface, behind public names of ours.

Textual documents its public API; what it keeps private can change in any release (which is why
`pyproject.toml` pins Textual's minor version). The UI needs a few private names for speed
(painting a key's echo at once, one layout per resize, painting only the lines that changed)
and for the terminal (a driver that survives a hang-up, notifications, Alt+Enter). They are all
here, and nothing else in `tui_agent/` touches a private name or module of Textual;
`tests/ui/test_textual_canaries.py` checks each one against the installed Textual, so an upgrade
that removes or changes one fails there, naming it, instead of slowing or breaking the app.

PRIVATE NAMES (each has a canary in `tests/ui/test_textual_canaries.py`, which also checks that
this list and its canaries are the same):
- `textual._ansi_sequences.ANSI_SEQUENCES_KEYS`: the parser's table of key sequences; we add
  Alt+Enter (`ESC CR`), which it lacks (`add_key_sequence`, used by `ui/keys.py`).
- `Screen._on_update`: Textual's handler for a widget asking for a repaint; we note the focused
  widget's request after a key (`PaintNowScreen`, used by `ui/main_screen.py`).
- `Screen._on_idle`: Textual's idle handler; we paint the frame there instead of waiting for its
  slot (`PaintNowScreen`).
- `Screen._on_screen_resume`: Textual's handler for a screen made current, which styles every
  node of the screen again when the event's public `refresh_styles` says so; on the default
  screen's first resume we say no, as each node was styled when it was mounted moments before
  (`PaintNowScreen`).
- `Screen._on_timer_update`: the frame itself (layout, then paint), which the frame timer calls;
  we call it early when a key's widget cannot be painted alone (`PaintNowScreen.paint_now`),
  and hold the timer's call back while a key is on its way (`PaintNowScreen.input_waiting`).
- `Screen._layout_required`: the next frame lays the screen out; a key's widget is then not
  painted alone (`PaintNowScreen.paint_now`).
- `Screen._scroll_required`: the next frame moves what a scroll moved; the same.
- `Screen._repaint_required`: the next frame paints the whole screen; the same.
- `Screen._layout_widgets`: the widgets that asked for the pending layout, by ancestor; a key's
  widget that asked for none of it is painted alone before the layout (`PaintNowScreen.paint_now`).
- `Screen._dirty_widgets`: the set of widgets waiting to be painted at the next frame; a key's
  widget is taken out of it and painted alone, the others stay (`PaintNowScreen.paint_now`).
- `Screen._compositor`: the screen's compositor; `update_widgets` turns a widget's repaint
  requests into the regions `_compositor_refresh` paints (`PaintNowScreen.paint_now`).
- `Screen._compositor_refresh`: paints the compositor's pending regions and writes them to the
  terminal (`PaintNowScreen.paint_now`).
- `App._batch_count`: non-zero inside `batch_update()`, when no frame may be painted
  (`PaintNowScreen.batching`).
- `"_default"`: the id Textual gives the app's default screen (`App.get_default_screen`); ours
  replaces it (`PaintNowScreen`).
- `Widget._size_updated`: Textual hands a widget its new size here, and it decides whether the
  widget is painted whole and laid out again (`SizeUpdateHook`, used by `widgets/one_layout.py`
  and `widgets/markdown_view.py`).
- `Widget._size`: the size `_size_updated` compares with; setting it first spares a widget
  whose old lines stay valid a whole repaint (`SizeUpdateHook.repaint_on_resize`).
- `Widget._anchor_released`: an anchored view the user moved; the public `release_anchor` also
  moves the scroll target, which the transcript must not (`anchor_released`,
  `release_anchor_here`, used by `widgets/transcript.py`).
- `TextArea._on_key`: the TextArea's key handler; the prompt takes its keys (Enter sends,
  Ctrl+S steers, history, completion) before the TextArea inserts text (`TextAreaHooks`, used by
  `widgets/prompt_input.py`).
- `TextArea._on_paste`: the TextArea's paste handler; the prompt folds a long paste into a chip
  first (`TextAreaHooks`).
- `Footer._bindings_ready`: the footer draws its keys once this is set; the footer that
  coalesces recomposes sets it as Textual's does (`set_bindings_ready`, used by
  `widgets/key_footer.py`).
- `textual.widgets._footer.FooterKey`: the footer's key widget, whose `compact` starts True and
  is bound to its footer's (False) when mounted, each change restyling the key; the footer sets
  it first (`start_compact`, used by `widgets/key_footer.py`).
- `App._refresh_truecolor_filter`: rebuilds the filter that turns ANSI colours into the
  theme's true colours; a theme chosen before the app starts (so that Textual's first
  stylesheet parse already uses it, `set_theme_before_start`) needs it, as the theme's watcher
  would have.
- `App._driver`: the driver that writes to the terminal; notifications go straight to it, and an
  exit that cannot wait restores the terminal through it (`app_driver`, used by `ui/app.py`).
- `Driver._app`: the app a driver feeds; the terminal driver tells it the terminal is gone
  (`LinuxDriverHooks.driven_app`, used by `ui/terminal_driver.py`).
- `Driver._auto_restart`: whether a Ctrl+Z leaves application mode (so SIGCONT must restore it)
  (`LinuxDriverHooks.suspending`).
- `LinuxDriver._file`: the stream the driver's writer thread writes to; we give it one that
  survives a hang-up (`LinuxDriverHooks.replace_output`).
- `LinuxDriver._sigtstp_application`: the SIGTSTP handler (`LinuxDriverHooks.suspending`).
- `LinuxDriver._sigcont_application`: the SIGCONT handler; it restores application mode on any
  SIGCONT, a hang-up's included (`LinuxDriverHooks.take_sigcont`).

Textual's message dispatch calls a private handler (`_on_update`, `_on_idle`, `_on_paste`) of
every class in the MRO, the subclass's first, then Textual's own unless the event's default was
prevented: so the screen's and the paste hooks here do not call `super()`.
"""

from __future__ import annotations

import enum
import time
from typing import TYPE_CHECKING, Any, Protocol, cast

from textual import _ansi_sequences, events, messages
from textual.app import App
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, TextArea
from textual.widgets._footer import FooterKey

DEFAULT_SCREEN_ID = "_default"  # Textual's name for the app's first screen
MAX_FRAME_DELAY_S = 0.1  # a frame waits at most this long for keys on their way

# ------------------------------------------------------------ keys


def add_key_sequence(sequence: str, key: enum.Enum) -> None:
    """Teach Textual's parser that `sequence` is `key` (read at once, with no escape delay);
    a sequence it already knows keeps its meaning."""
    table = cast(dict[str, object], _ansi_sequences.ANSI_SEQUENCES_KEYS)
    table.setdefault(sequence, (key,))


# ------------------------------------------------------------ the frame


class PaintNowScreen(Screen[None]):
    """The app's default screen, able to paint a widget before the frame timer's slot.

    `widget_updated` hears each widget's repaint request before Textual queues it; `idle` runs
    when the screen has nothing else queued, before Textual's own idle handler; a subclass
    calls `paint_now` from there. While `input_waiting` says a key is on its way, the frame
    timer's frames wait (at most `MAX_FRAME_DELAY_S`): the key is taken and painted first,
    instead of after a frame of streamed text that the timer started just after it came."""

    def __init__(self) -> None:
        super().__init__(id=DEFAULT_SCREEN_ID)
        self._frame_held_at: float | None = None  # when a frame first waited for a key
        self._resumed = False

    def input_waiting(self) -> bool:
        """A key is on its way to the app (a subclass knows how to tell)."""
        return False

    def widget_updated(self, widget: Widget) -> None:
        """`widget` asked to be painted again."""

    def idle(self) -> None:
        """The screen has nothing queued."""

    @property
    def batching(self) -> bool:
        """Inside the app's `batch_update()`: no frame may be painted."""
        return bool(self.app._batch_count)

    def paint_now(self, widget: Widget) -> None:
        """Paint `widget`'s pending change now, without waiting for the frame's slot, and
        nothing else: what other widgets asked for (a streamed answer and the layout it asked
        for, a scroll bar, a pane) keeps to the frame's slot. Painting the scroll bar beside
        the transcript, say, means compositing every row it spans, which made a key's paint
        cost three times as much. When `widget` itself must first be laid out or scrolled, the
        screen painted whole, or `widget` asked for nothing, the whole frame is painted now."""
        if not self._paints_alone(widget):
            self._frame_now()
            return
        dirty = self._dirty_widgets
        others = dirty - {widget}
        self._compositor.update_widgets({widget})
        self._compositor_refresh()  # empties `dirty`
        dirty |= others  # Textual's idle handler sees them and runs the frame in its slot

    def _paints_alone(self, widget: Widget) -> bool:
        """Whether `widget` shows right painted alone in the layout it has now."""
        if self._repaint_required or widget not in self._dirty_widgets:
            return False
        if self._scroll_required and widget.parent is not self:
            return False  # (a scroll moves what is inside a container, and the screen has none)
        if self._layout_required:
            asked = self._layout_widgets
            if not asked or widget in asked or any(widget in some for some in asked.values()):
                return False
        return True

    def _frame_now(self) -> None:
        self._frame_held_at = None
        super()._on_timer_update()

    def _on_timer_update(self) -> None:
        if self.input_waiting():
            now = time.monotonic()
            if self._frame_held_at is None:
                self._frame_held_at = now
            if now - self._frame_held_at < MAX_FRAME_DELAY_S:
                return  # the timer calls again at its next slot
        self._frame_now()

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        # The first resume comes as the app starts, right after every node of the screen was
        # mounted and styled; styling them all again would hold the first frame back (4% of
        # the instructions to it). A later resume (after a dialog) restyles as Textual does.
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False

    async def _on_update(self, message: messages.Update) -> None:
        self.widget_updated(message.widget)

    async def _on_idle(self, event: events.Idle) -> None:
        self.idle()


# ------------------------------------------------------------ sizes

# A mixin, not a Widget subclass: as a base before a container it would bring `Widget`'s
# default CSS ahead of the container's (a transcript that could no longer scroll).
if TYPE_CHECKING:
    _WidgetBase = Widget
else:
    _WidgetBase = object


class SizeUpdateHook(_WidgetBase):
    """Say how a widget takes a new size; list it before the widget class it is mixed into.

    `LAYOUT_ON_VIRTUAL_RESIZE = False`: a new virtual (scrollable) size asks for no second
    layout of the screen. `repaint_on_resize` False: the widget is not painted whole for it."""

    LAYOUT_ON_VIRTUAL_RESIZE = True

    def repaint_on_resize(self, old: Size, new: Size) -> bool:
        """Whether going from size `old` to `new` paints the whole widget again."""
        return True

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        if not self.repaint_on_resize(self._size, size):
            self._size = size  # Textual paints the widget whole only when this differs
        return super()._size_updated(
            size, virtual_size, container_size, layout and self.LAYOUT_ON_VIRTUAL_RESIZE
        )


# ------------------------------------------------------------ scrolling


def anchor_released(widget: Widget) -> bool:
    """Whether the user moved an anchored view away from its end."""
    return widget._anchor_released


def release_anchor_here(widget: Widget) -> None:
    """Let an anchored view stay where it is as content changes (`Widget.release_anchor`
    would also reset where a scroll under way is going)."""
    widget._anchor_released = True


# ------------------------------------------------------------ text input


class TextAreaHooks(TextArea):
    """A TextArea whose subclass sees each key and paste before the TextArea does."""

    def take_key(self, event: events.Key) -> bool:
        """Whether the key was handled here (the TextArea then never sees it)."""
        return False

    def adjust_paste(self, event: events.Paste) -> None:
        """Change the pasted text, or stop the event to keep it from the TextArea."""

    async def _on_key(self, event: events.Key) -> None:
        if self.take_key(event):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    async def _on_paste(self, event: events.Paste) -> None:
        self.adjust_paste(event)


# ------------------------------------------------------------ the footer


def set_bindings_ready(footer: Footer) -> None:
    """What `Footer.bindings_changed` does first: the keys may be drawn from now on."""
    footer._bindings_ready = True


def start_compact(widget: Widget, compact: bool) -> None:
    """A key the footer composes starts as compact as its footer, before it is mounted: it
    would start compact (Textual's default) and follow its footer's `compact` at mount, each
    change restyling it and its two parts (2% of the instructions to the first frame). The
    command palette's key follows no footer: it is left as Textual makes it."""
    if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
        widget.set_reactive(FooterKey.compact, compact)


# ------------------------------------------------------------ the terminal


def refresh_ansi_colours(app: App[Any]) -> None:
    """Map ANSI colours through the app's current ANSI theme (set without its watcher)."""
    app._refresh_truecolor_filter(app.ansi_theme)


def app_driver(app: App[Any]) -> Driver | None:
    """The driver that writes to the app's terminal (None before it starts or in tests)."""
    return app._driver


class TerminalFile(Protocol):
    """What the driver's writer thread uses of its stream."""

    def write(self, text: str) -> object: ...
    def flush(self) -> None: ...
    def fileno(self) -> int: ...


class LinuxDriverHooks(LinuxDriver):
    """Textual's Linux driver with public names for what a subclass changes."""

    @property
    def driven_app(self) -> App[Any]:
        return self._app

    def replace_output(self, output: TerminalFile) -> None:
        """Make the writer thread (the only user of the stream) write to `output`."""
        self._file = cast(Any, output)

    def suspending(self, leaves_application_mode: bool) -> None:
        """SIGTSTP arrived; the driver leaves application mode now when the flag says so."""

    def take_sigcont(self) -> bool:
        """SIGCONT arrived: whether to restore application mode (as Textual does on any)."""
        return True

    def _sigtstp_application(self, *args: Any) -> None:
        self.suspending(self._auto_restart)
        super()._sigtstp_application(*args)

    def _sigcont_application(self, *args: Any) -> None:
        if self.take_sigcont():
            super()._sigcont_application(*args)
