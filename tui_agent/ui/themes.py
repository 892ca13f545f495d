"""The app's colour themes: a dark and a light one that keep every colour we draw readable.

Textual's own `textual-dark` draws `$error` at a contrast of 3.5:1 on its background, and
`textual-light` draws `$warning`, `$success` and the ANSI yellow, green and cyan that our diffs
and status bar use under 3.3:1, so neither is good enough to read a diff on. `tui-agent-dark`
keeps textual-dark's look with a brighter error and red; `tui-agent-light` is a light theme
whose every colour reaches 4.5:1 (WCAG AA for text) on the background, the panes' surface and
the status bar's panel (`tests/ui/test_themes.py` measures it).

The colours our widgets name in Rich styles ("green", "red", ...) are ANSI colours, which
Textual turns into true colours through the app's ANSI theme, one for dark themes and one for
light ones (`App.ansi_theme_dark` / `ansi_theme_light`): ours are set here as well, so an
added line in a diff is readable in both. Textual's other themes stay on offer (`/theme`), as
they come. `NO_COLOR` in the environment turns colour off whatever the theme (Textual's
monochrome filter).
"""

from __future__ import annotations

from typing import Any

from rich.terminal_theme import TerminalTheme
from rich.theme import Theme as RichStyles
from textual.app import App
from textual.theme import Theme

from tui_agent.ui._textual_hooks import refresh_ansi_colours

DARK = "tui-agent-dark"
LIGHT = "tui-agent-light"
DEFAULT_THEME = DARK

DARK_THEME = Theme(
    name=DARK,
    primary="#0178D4",
    secondary="#004578",
    warning="#ffa62b",
    error="#f0728c",
    success="#4EBF71",
    accent="#ffa62b",
    foreground="#e0e0e0",
    dark=True,
    # Derived from the dark-blue secondary, it was 3.4:1 on the panel (the "compacted" marker).
    variables={"text-secondary": "#86A8E0"},
)

LIGHT_THEME = Theme(
    name=LIGHT,
    primary="#0B5CAD",
    secondary="#5B3E96",
    warning="#8A5200",
    error="#B3202F",
    success="#17703A",
    accent="#8A4B00",
    foreground="#1C1C1C",
    background="#FAFAFA",
    surface="#F2F2F2",
    panel="#E8E8E8",
    dark=False,
    variables={"footer-key-foreground": "#0B5CAD"},
)

# ANSI colours as true colours, (normal 8, bright 8 less black and white as Rich lists them).
DARK_ANSI = TerminalTheme(
    (12, 12, 12),
    (217, 217, 217),
    [
        (26, 26, 26),
        (255, 92, 122),
        (152, 224, 36),
        (253, 151, 31),
        (157, 101, 255),
        (240, 110, 200),
        (88, 209, 235),
        (196, 197, 181),
        (98, 94, 76),
    ],
    [
        (255, 110, 136),
        (152, 224, 36),
        (224, 213, 97),
        (175, 135, 255),
        (240, 130, 210),
        (88, 209, 235),
        (246, 246, 239),
    ],
)

LIGHT_ANSI = TerminalTheme(
    (250, 250, 250),
    (28, 28, 28),
    [
        (28, 28, 28),
        (179, 38, 30),
        (27, 116, 50),
        (122, 84, 0),
        (31, 86, 186),
        (136, 50, 160),
        (10, 108, 128),
        (232, 232, 232),
        (96, 96, 96),
    ],
    [
        (196, 48, 40),
        (30, 124, 54),
        (130, 92, 0),
        (40, 96, 200),
        (150, 60, 175),
        (12, 116, 138),
        (232, 232, 232),
    ],
)


# Rich draws inline code in Markdown "bold cyan on black": a dark patch on a light theme.
LIGHT_CODE = RichStyles({"markdown.code": "bold #0B5C6E on #E4E4E4"})


def install_themes(app: App[Any]) -> None:
    """In a running app: register our two themes and the ANSI colours that go with dark and
    light themes, and follow the theme with the inline-code style."""
    _register(app)
    app.ansi_theme_dark = DARK_ANSI
    app.ansi_theme_light = LIGHT_ANSI
    follow_code_styles(app)


def set_theme_before_start(app: App[Any], name: str) -> str | None:
    """Before the app runs: our themes, our ANSI colours and theme `name` (or the default), so
    that Textual's first parse of the stylesheet uses their variables. Set in a running app,
    the theme and the ANSI colours each re-parse every stylesheet source (Textual's watchers),
    which is two whole parses before the first frame. None when done, else why not."""
    _register(app)
    app.set_reactive(App.ansi_theme_dark, DARK_ANSI)
    app.set_reactive(App.ansi_theme_light, LIGHT_ANSI)
    problem = _unknown(app, name)
    app.set_reactive(App.theme, DEFAULT_THEME if problem else name)
    # What the theme's watcher would have done, before anything was parsed or styled.
    dark = app.current_theme.dark
    app.set_class(True, f"-theme-{app.theme}", update=False)
    app.set_class(dark, "-dark-mode", update=False)
    app.set_class(not dark, "-light-mode", update=False)
    app.stylesheet.set_variables(app.get_css_variables())
    refresh_ansi_colours(app)
    return problem


def follow_code_styles(app: App[Any]) -> None:
    """Once the app runs (a signal takes subscribers only then): the inline-code style for the
    theme now, and again whenever it changes."""
    styles = _CodeStyles(app)
    styles(app.current_theme)
    app.theme_changed_signal.subscribe(app, styles)


def _register(app: App[Any]) -> None:
    app.register_theme(DARK_THEME)
    app.register_theme(LIGHT_THEME)


class _CodeStyles:
    """Follows the theme: Rich's inline-code style on dark themes, `LIGHT_CODE` on light ones."""

    def __init__(self, app: App[Any]) -> None:
        self._console = app.console
        self._pushed = False

    def __call__(self, theme: Theme) -> None:
        if self._pushed:
            self._console.pop_theme()
        self._pushed = not theme.dark
        if self._pushed:
            self._console.push_theme(LIGHT_CODE)


def choose_theme(app: App[Any], name: str) -> str | None:
    """Switch to theme `name`; None when done, else why not (naming the themes there are)."""
    problem = _unknown(app, name)
    if problem is None:
        app.theme = name
    return problem


def _unknown(app: App[Any], name: str) -> str | None:
    themes = app.available_themes
    if name not in themes:
        return f"no theme {name!r}; themes: {', '.join(sorted(themes))}"
    return None
