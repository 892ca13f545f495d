"""Canaries for the private names of Textual that `tui_agent/ui/_textual_hooks.py` touches.

One test per name in the fence's header: each fails, naming the private name and what depends
on it, when an upgrade of Textual removes the name or changes the shape we rely on. The last
test checks that the header and these canaries list the same names.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from rich.color import Color as RichColor
from rich.style import Style
from textual.app import App
from textual.filter import ANSIToTruecolor
from textual.geometry import Size
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, TextArea

from tui_agent.ui import _textual_hooks
from tui_agent.ui.themes import DARK_ANSI

CANARIES: dict[str, str] = {}  # private name -> what depends on it
Test = TypeVar("Test", bound=Callable[..., object])


def canary(name: str, dependent: str) -> Callable[[Test], Test]:
    def register(test: Test) -> Test:
        CANARIES[name] = dependent
        return test

    return register


def expect(condition: object, name: str, shape: str) -> None:
    assert condition, (
        f"Textual's private `{name}` is gone or no longer {shape}; {CANARIES[name]} depends on "
        "it: see tui_agent/ui/_textual_hooks.py"
    )


def parameters(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


def is_handler(cls: type, name: str) -> bool:
    """`cls` defines `name` as an async message handler taking (self, message)."""
    method = vars(cls).get(name)
    return inspect.iscoroutinefunction(method) and len(parameters(method)) == 2


def is_signal_handler(cls: type, name: str) -> bool:
    """`cls` defines `name` as a method the signal module can call with (signum, frame)."""
    method = vars(cls).get(name)
    kinds = [p.kind for p in inspect.signature(method).parameters.values()] if method else []
    return kinds == [inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.VAR_POSITIONAL]


@pytest.fixture
async def linux_driver() -> Any:
    from textual.drivers.linux_driver import LinuxDriver

    app: App[None] = App()
    return app, LinuxDriver(app)


# ------------------------------------------------------------ keys


@canary(
    "textual._ansi_sequences.ANSI_SEQUENCES_KEYS",
    "Alt+Enter in a legacy terminal (`ui/keys.py`, `add_key_sequence`)",
)
def test_the_key_sequence_table_is_a_dict_the_parser_reads() -> None:
    name = "textual._ansi_sequences.ANSI_SEQUENCES_KEYS"
    try:
        from textual import _ansi_sequences, _xterm_parser
    except ImportError:
        expect(False, name, "importable")
    table = getattr(_ansi_sequences, "ANSI_SEQUENCES_KEYS", None)
    expect(isinstance(table, dict), name, "a dict we can add to")
    expect(isinstance(table and table.get("\x1b[A"), tuple), name, "a table of key tuples")
    expect(
        getattr(_xterm_parser, "ANSI_SEQUENCES_KEYS", None) is table,
        name,
        "the table the parser looks sequences up in",
    )


# ------------------------------------------------------------ the frame


@canary("Screen._on_update", "painting a key's echo at once (`PaintNowScreen`, `MainScreen`)")
def test_the_screen_hears_repaint_requests_in_on_update() -> None:
    expect(is_handler(Screen, "_on_update"), "Screen._on_update", "a handler of Update")


@canary("Screen._on_idle", "painting a key's echo at once (`PaintNowScreen`, `MainScreen`)")
def test_the_screen_has_an_idle_handler() -> None:
    expect(is_handler(Screen, "_on_idle"), "Screen._on_idle", "a handler of Idle")


@canary("Screen._on_screen_resume", "styling the first screen once (`PaintNowScreen`)")
def test_the_screen_restyles_on_resume_as_the_event_says() -> None:
    method = vars(Screen).get("_on_screen_resume")
    expect(
        callable(method) and parameters(method) == ["self", "event"],
        "Screen._on_screen_resume",
        "a handler of ScreenResume",
    )
    expect(
        "event.refresh_styles" in inspect.getsource(method),
        "Screen._on_screen_resume",
        "reading the event's refresh_styles",
    )


@canary("Screen._on_timer_update", "painting a key's echo at once (`paint_frame_now`)")
def test_the_screen_paints_its_frame_in_on_timer_update() -> None:
    method = vars(Screen).get("_on_timer_update")
    expect(
        callable(method) and parameters(method) == ["self"],
        "Screen._on_timer_update",
        "a method taking no arguments",
    )


@canary("Screen._layout_required", "painting a key's widget alone (`paint_now`)")
def test_the_screen_says_a_layout_is_due() -> None:
    screen: Screen[None] = Screen()
    expect(getattr(screen, "_layout_required", None) is False, "Screen._layout_required", "False")


@canary("Screen._scroll_required", "painting a key's widget alone (`paint_now`)")
def test_the_screen_says_a_scroll_is_due() -> None:
    screen: Screen[None] = Screen()
    expect(getattr(screen, "_scroll_required", None) is False, "Screen._scroll_required", "False")


@canary("Screen._repaint_required", "painting a key's widget alone (`paint_now`)")
def test_the_screen_says_a_whole_repaint_is_due() -> None:
    screen: Screen[None] = Screen()
    expect(getattr(screen, "_repaint_required", None) is False, "Screen._repaint_required", "False")


@canary("Screen._layout_widgets", "painting a key's widget alone (`paint_now`)")
def test_the_screen_keeps_who_asked_for_a_layout() -> None:
    screen: Screen[None] = Screen()
    expect(
        getattr(screen, "_layout_widgets", None) == {},
        "Screen._layout_widgets",
        "a dict of ancestors to the widgets that asked, empty at first",
    )


@canary("Screen._dirty_widgets", "painting a key's widget alone (`paint_now`)")
def test_the_screen_keeps_a_set_of_widgets_to_paint() -> None:
    screen: Screen[None] = Screen()
    expect(
        type(getattr(screen, "_dirty_widgets", None)) is set,
        "Screen._dirty_widgets",
        "a set",
    )


@canary("Screen._compositor", "painting a key's widget alone (`paint_now`)")
def test_the_screen_has_a_compositor_that_updates_widgets() -> None:
    screen: Screen[None] = Screen()
    method = getattr(getattr(screen, "_compositor", None), "update_widgets", None)
    expect(
        callable(method) and parameters(method) == ["widgets"],
        "Screen._compositor",
        "a compositor with update_widgets(widgets)",
    )


@canary("Screen._compositor_refresh", "painting a key's widget alone (`paint_now`)")
def test_the_screen_paints_its_compositor_in_compositor_refresh() -> None:
    method = vars(Screen).get("_compositor_refresh")
    expect(
        callable(method) and parameters(method) == ["self"],
        "Screen._compositor_refresh",
        "a method taking no arguments",
    )


@canary("App._batch_count", "no early frame inside `batch_update` (`PaintNowScreen.batching`)")
def test_the_app_counts_batches() -> None:
    app: App[None] = App()
    count = getattr(app, "_batch_count", None)
    expect(count == 0, "App._batch_count", "an int that starts at 0")
    with app.batch_update():
        expect(getattr(app, "_batch_count", 0) > 0, "App._batch_count", "raised in a batch")


@canary('"_default"', "the app's own default screen (`PaintNowScreen`, `MainScreen`)")
def test_the_default_screen_is_called_default() -> None:
    screen = App().get_default_screen()
    expect(screen.id == _textual_hooks.DEFAULT_SCREEN_ID, '"_default"', "the default screen's id")


# ------------------------------------------------------------ sizes


@canary(
    "Widget._size_updated",
    "one layout per resize and no whole repaint of a growing answer (`SizeUpdateHook`)",
)
def test_a_widget_takes_its_size_in_size_updated() -> None:
    method = vars(Widget).get("_size_updated")
    expect(
        method is not None
        and parameters(method) == ["self", "size", "virtual_size", "container_size", "layout"]
        and inspect.signature(method).parameters["layout"].default is True,
        "Widget._size_updated",
        "(size, virtual_size, container_size, layout=True)",
    )


@canary("Widget._size", "no whole repaint of a growing answer (`SizeUpdateHook`)")
def test_a_widget_keeps_its_size_in_size() -> None:
    widget = Widget()
    expect(isinstance(getattr(widget, "_size", None), Size), "Widget._size", "a Size")
    widget._size_updated(Size(10, 3), Size(10, 3), Size(10, 3))
    expect(getattr(widget, "_size", None) == Size(10, 3), "Widget._size", "the size it took")


# ------------------------------------------------------------ scrolling


@canary("Widget._anchor_released", "the transcript leaving the tail alone (`anchor_released`)")
def test_a_widget_says_whether_its_anchor_was_released() -> None:
    widget = Widget()
    expect(getattr(widget, "_anchor_released", None) is False, "Widget._anchor_released", "False")
    widget.release_anchor()
    expect(
        getattr(widget, "_anchor_released", None) is True,
        "Widget._anchor_released",
        "what `release_anchor` sets",
    )


# ------------------------------------------------------------ text input


@canary("TextArea._on_key", "the prompt's keys: Enter, Ctrl+S, history (`TextAreaHooks`)")
def test_the_text_area_handles_keys_in_on_key() -> None:
    expect(is_handler(TextArea, "_on_key"), "TextArea._on_key", "a handler of Key")


@canary("TextArea._on_paste", "folding a long paste into a chip (`TextAreaHooks`)")
def test_the_text_area_handles_pastes_in_on_paste() -> None:
    expect(is_handler(TextArea, "_on_paste"), "TextArea._on_paste", "a handler of Paste")


# ------------------------------------------------------------ the footer


@canary("Footer._bindings_ready", "the footer drawing its keys (`widgets/key_footer.py`)")
def test_the_footer_draws_keys_once_bindings_are_ready() -> None:
    expect(
        isinstance(vars(Footer).get("_bindings_ready"), Reactive),
        "Footer._bindings_ready",
        "a reactive",
    )


@canary("textual.widgets._footer.FooterKey", "footer keys styled once (`start_compact`)")
def test_a_footer_key_starts_compact_and_says_so_in_a_class() -> None:
    name = "textual.widgets._footer.FooterKey"
    try:
        from textual.widgets._footer import FooterKey
    except ImportError:
        expect(False, name, "importable")
    compact = vars(FooterKey).get("compact")
    expect(isinstance(compact, Reactive), name, "a widget with a `compact` reactive")
    key = FooterKey("q", "q", "Quit", "quit")
    expect(key.compact is True, name, "compact unless its footer says otherwise")
    expect("-compact" in inspect.getsource(FooterKey), name, "showing `compact` as a class")
    expect(
        'classes="-command-palette"' in inspect.getsource(Footer),
        name,
        "the palette's key marked by its class",
    )


# ------------------------------------------------------------ the terminal


@canary(
    "App._refresh_truecolor_filter",
    "the ANSI colours of a theme set before the app runs (`refresh_ansi_colours`)",
)
def test_the_app_rebuilds_its_ansi_filter() -> None:
    app: App[None] = App()  # textual-dark: ANSI colours through `ansi_theme_dark`
    app.set_reactive(App.ansi_theme_dark, DARK_ANSI)
    _textual_hooks.refresh_ansi_colours(app)
    filters = [f for f in getattr(app, "_filters", []) if isinstance(f, ANSIToTruecolor)]
    red = filters[0].truecolor_style(Style(color="red"), RichColor.parse("black")).color
    expect(
        red is not None and red.triplet == DARK_ANSI.ansi_colors[1],
        "App._refresh_truecolor_filter",
        "rebuilding the ANSI filter from the theme it is given",
    )


@canary("App._driver", "desktop notifications and restoring the terminal at once (`app_driver`)")
def test_the_app_keeps_its_driver() -> None:
    expect(getattr(App(), "_driver", 0) is None, "App._driver", "None before the app runs")


@canary("Driver._app", "telling the app the terminal is gone (`LinuxDriverHooks.driven_app`)")
async def test_a_driver_knows_its_app(linux_driver: Any) -> None:
    app, driver = linux_driver
    expect(getattr(driver, "_app", None) is app, "Driver._app", "the app it feeds")


@canary("Driver._auto_restart", "no second application mode after a hang-up (`suspending`)")
async def test_a_driver_says_whether_it_restarts(linux_driver: Any) -> None:
    _app, driver = linux_driver
    expect(getattr(driver, "_auto_restart", None) is True, "Driver._auto_restart", "a bool")


@canary("LinuxDriver._file", "surviving a hang-up's failed writes (`replace_output`)")
async def test_the_driver_writes_to_file(linux_driver: Any) -> None:
    _app, driver = linux_driver
    expect(
        getattr(driver, "_file", None) is sys.__stderr__,
        "LinuxDriver._file",
        "the stream the writer thread is given",
    )


@canary("LinuxDriver._sigtstp_application", "Ctrl+Z from outside (`suspending`)")
def test_the_driver_handles_sigtstp() -> None:
    from textual.drivers.linux_driver import LinuxDriver

    expect(
        is_signal_handler(LinuxDriver, "_sigtstp_application"),
        "LinuxDriver._sigtstp_application",
        "a signal handler",
    )


@canary("LinuxDriver._sigcont_application", "no second application mode (`take_sigcont`)")
def test_the_driver_handles_sigcont() -> None:
    from textual.drivers.linux_driver import LinuxDriver

    expect(
        is_signal_handler(LinuxDriver, "_sigcont_application"),
        "LinuxDriver._sigcont_application",
        "a signal handler",
    )


# ------------------------------------------------------------ the list


def header_names() -> list[str]:
    doc = _textual_hooks.__doc__ or ""
    listing = doc.split("PRIVATE NAMES", 1)[-1].split("\n\n", 1)[0]
    return re.findall(r"^- `([^`]+)`", listing, flags=re.MULTILINE)


def test_every_private_name_in_the_fence_has_a_canary() -> None:
    assert header_names() == list(CANARIES), (
        "the header of tui_agent/ui/_textual_hooks.py and the canaries here must list the same "
        "private names, in the same order"
    )
