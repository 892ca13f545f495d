"""The first frame is usable and comes as early as it can: the footer's keys are in it, and
the screen's widgets are styled once on the way to it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from rich.console import RenderableType
from textual.dom import DOMNode
from textual.screen import Screen

from tests.ui.fake_loop import INFO
from tests.ui.real_loop import until
from tui_agent.loop.api import LoopApi
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.opening import OpeningLoop


async def never_opens() -> LoopApi:
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


def opening_app() -> TuiAgentApp:
    """The app as the command line starts it: on a loop that is still opening."""
    return TuiAgentApp(OpeningLoop(INFO, never_opens))


def footer_keys(screen: Screen[Any]) -> list[str]:
    return [str(getattr(key, "description", "")) for key in screen.query("FooterKey")]


async def test_the_first_frame_shows_the_footer_keys() -> None:
    app = opening_app()
    first: list[list[str]] = []
    display = app._display

    def record(screen: Screen[Any], renderable: RenderableType | None) -> None:
        if renderable is not None and not first:
            first.append(footer_keys(screen))
        display(screen, renderable)

    app._display = record  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: bool(first))
    assert "Quit" in first[0]


async def test_the_screen_is_not_styled_again_when_it_first_becomes_current() -> None:
    app = opening_app()
    restyled: list[int] = []
    update_nodes = app.stylesheet.update_nodes

    def record(nodes: Iterable[DOMNode], animate: bool = False) -> None:
        nodes = list(nodes)
        if app.main_screen in nodes:
            restyled.append(len(nodes))
        update_nodes(nodes, animate=animate)

    app.stylesheet.update_nodes = record  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert footer_keys(app.screen)
    assert restyled == []


async def test_a_slash_command_typed_at_once_is_completed() -> None:
    # The completion lists are mounted after the first frame; keys may come before that.
    app = opening_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("/", "h", "e")
        await until(pilot, lambda: app.completion.is_mounted and app.completion.display)
        assert app.completion.option_count >= 1
        await pilot.press("ctrl+f")
        await until(pilot, lambda: app.find_bar.is_mounted and app.find_bar.display)
