"""Our dark and light themes keep the colours we draw readable, and `/theme` switches them.

The contrast check is WCAG's (relative luminance, 4.5:1 for text) of every colour the
transcript, diffs and status bar use, on every background they are drawn on.
"""

from __future__ import annotations

import pytest
from textual.app import App
from textual.color import Color
from textual.css.stylesheet import Stylesheet

from tests.ui.fake_loop import FakeLoop
from tests.ui.real_loop import until
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.hooks import Appearance
from tui_agent.ui.state import MarkerBlock
from tui_agent.ui.themes import (
    DARK,
    DARK_ANSI,
    LIGHT,
    LIGHT_ANSI,
    choose_theme,
    install_themes,
)

AA = 4.5
# Theme colours the stylesheet uses for text, and the ANSI colours our Rich styles name
# (diffs: green, red, cyan; status: green, cyan, yellow, red, magenta; errors: red).
THEME_TEXT = ("foreground", "warning", "error", "success", "accent", "text-secondary")
ANSI_TEXT = {"red": 1, "green": 2, "yellow": 3, "magenta": 5, "cyan": 6}
GROUNDS = ("background", "surface", "panel")


def luminance(color: Color) -> float:
    def channel(value: int) -> float:
        v = value / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)


def contrast(a: Color, b: Color) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


class Bare(App[None]):
    def on_mount(self) -> None:
        install_themes(self)


@pytest.mark.parametrize("theme", [DARK, LIGHT])
async def test_every_text_colour_reaches_aa_on_every_background(theme: str) -> None:
    app = Bare()
    async with app.run_test():
        assert choose_theme(app, theme) is None
        variables = app.get_css_variables()
        ansi = app.ansi_theme
        colours = {name: Color.parse(variables[name]) for name in THEME_TEXT}
        for name, index in ANSI_TEXT.items():
            red, green, blue = ansi.ansi_colors[index]
            colours[f"ansi {name}"] = Color(red, green, blue)
        weak = [
            f"{name} on {ground}: {contrast(colour, Color.parse(variables[ground])):.2f}"
            for name, colour in colours.items()
            for ground in GROUNDS
            if contrast(colour, Color.parse(variables[ground])) < AA
        ]
        assert not weak, f"{theme}: " + "; ".join(weak)


async def test_textual_light_is_the_theme_this_replaces() -> None:
    """The check can fail: Textual's own light theme does not pass it."""
    app = Bare()
    async with app.run_test():
        choose_theme(app, "textual-light")
        variables = app.get_css_variables()
        background = Color.parse(variables["background"])
        assert contrast(Color.parse(variables["warning"]), background) < AA


async def test_an_unknown_theme_is_refused_with_the_names_there_are() -> None:
    app = Bare()
    async with app.run_test():
        problem = choose_theme(app, "solarised-purple")
        assert problem is not None and LIGHT in problem and DARK in problem
        assert app.theme != "solarised-purple"


async def test_the_configured_theme_applies_and_a_wrong_one_is_said() -> None:
    app = TuiAgentApp(FakeLoop(), appearance=Appearance(theme=LIGHT))
    async with app.run_test():
        assert app.theme == LIGHT and app.ansi_theme.ansi_colors[2] == (27, 116, 50)
    app = TuiAgentApp(FakeLoop(), appearance=Appearance(theme="nope"))
    async with app.run_test() as pilot:
        await until(pilot, lambda: any("no theme 'nope'" in text for text in _markers(app)))
        assert app.theme == DARK


@pytest.mark.parametrize("theme", [DARK, LIGHT])
async def test_the_first_frame_parses_the_stylesheet_with_the_theme_already_set(
    theme: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Set once mounted, the theme and the ANSI colours each re-parsed every stylesheet source
    (two of the six whole parses before the first frame); set before the app runs, none."""
    reparses: list[Stylesheet] = []
    reparse = Stylesheet.reparse

    def counted(self: Stylesheet) -> None:
        reparses.append(self)
        reparse(self)

    monkeypatch.setattr(Stylesheet, "reparse", counted)
    app = TuiAgentApp(FakeLoop(), appearance=Appearance(theme=theme))
    async with app.run_test():
        assert reparses == []
        dark = theme == DARK
        assert app.has_class(f"-theme-{theme}") and app.has_class("-dark-mode") is dark
        variables = app.get_css_variables()
        assert app.screen.styles.background == Color.parse(variables["background"])
        red = app.ansi_theme.ansi_colors[1]
        assert red == (DARK_ANSI if dark else LIGHT_ANSI).ansi_colors[1]
        code = app.console.get_style("markdown.code")
        assert (code.bgcolor is not None and code.bgcolor.name == "#e4e4e4") is not dark


async def test_inline_code_follows_the_theme() -> None:
    app = Bare()
    async with app.run_test() as pilot:
        default = app.console.get_style("markdown.code")
        choose_theme(app, LIGHT)
        await pilot.pause()
        light = app.console.get_style("markdown.code")
        assert light != default and light.bgcolor is not None and light.bgcolor.name == "#e4e4e4"
        choose_theme(app, DARK)
        await pilot.pause()
        assert app.console.get_style("markdown.code") == default


async def test_slash_theme_lists_and_switches() -> None:
    app = TuiAgentApp(FakeLoop())
    async with app.run_test() as pilot:
        app.run_slash("theme", "")
        assert any(f"[{DARK}]" in text and LIGHT in text for text in _markers(app))
        app.run_slash("theme", LIGHT)
        await pilot.pause()
        assert app.theme == LIGHT


def _markers(app: TuiAgentApp) -> list[str]:
    return [block.text for block in app.vm.blocks if isinstance(block, MarkerBlock)]
