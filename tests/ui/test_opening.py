"""The app draws before the loop is open: an `OpeningLoop` stands in until the real one is
attached, commands given meanwhile reach the real loop, and a setup error ends the app."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.widgets import Footer

from tests.ui.fake_loop import INFO, FakeLoop
from tests.ui.real_loop import until
from tui_agent.loop.api import LoopApi
from tui_agent.session import LoopSetupError
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.opening import OpeningLoop
from tui_agent.ui.prompt_power import PromptPower


def opening(gate: asyncio.Event, real: FakeLoop) -> OpeningLoop:
    async def opener() -> LoopApi:
        await gate.wait()
        return real

    return OpeningLoop(INFO, opener)


async def test_a_prompt_sent_while_the_loop_opens_reaches_the_real_loop() -> None:
    gate, real = asyncio.Event(), FakeLoop()
    app = TuiAgentApp(opening(gate, real))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert app.prompt_input.has_focus  # usable at once
        await pilot.press("h", "i", "enter")
        await pilot.pause()
        assert real.calls == []  # still opening
        gate.set()
        await until(pilot, lambda: app.loop is real and bool(real.calls))
        assert real.calls == [("submit", ("hi", False))]


async def test_a_draft_typed_while_the_loop_opens_stays_and_is_sent_once_it_is_open() -> None:
    gate, real = asyncio.Event(), FakeLoop()
    app = TuiAgentApp(opening(gate, real))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("d", "r", "a", "f", "t")  # no pause first: the keys come at once
        gate.set()
        await until(pilot, lambda: app.loop is real)
        assert app.prompt_input.text == "draft"  # attaching the loop kept it
        await pilot.press("enter")
        await until(pilot, lambda: bool(real.calls))
        assert real.calls == [("submit", ("draft", False))]


async def test_the_initial_prompt_is_sent_once_the_loop_is_open() -> None:
    gate, real = asyncio.Event(), FakeLoop()
    app = TuiAgentApp(opening(gate, real), initial_prompt="start here")
    async with app.run_test(size=(120, 36)) as pilot:
        gate.set()
        await until(pilot, lambda: bool(real.calls))
        assert real.calls == [("submit", ("start here", False))]


async def test_a_setup_error_ends_the_app_with_status_2() -> None:
    async def broken() -> LoopApi:
        raise LoopSetupError("config.toml, line 1: bad value")

    app = TuiAgentApp(OpeningLoop(INFO, broken))
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 2
    assert app.setup_error == "config.toml, line 1: bad value"


class Recording(TuiAgentApp):
    """Records how many keys the footer had when the work after the first frame began."""

    keys_then: int | None = None

    def _after_first_frame(self) -> None:
        self.keys_then = len(self.main_screen.query_one(Footer).query("FooterKey"))
        super()._after_first_frame()


async def test_the_work_after_the_first_frame_waits_for_the_footer_keys() -> None:
    # The footer draws its keys in the frame after the first; the work that follows the first
    # frame (imports on the event loop, worker threads holding the GIL) held them back for
    # most of a second, so it waits for them (`KeyFooter.after_keys_drawn`).
    app = Recording(OpeningLoop(INFO, opening_never()))
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.keys_then is not None)
    assert app.keys_then


def opening_never() -> Callable[[], Awaitable[LoopApi]]:
    async def opener() -> LoopApi:
        await asyncio.Event().wait()
        raise AssertionError("never opened")

    return opener


async def test_the_prompt_extras_are_read_once_for_the_real_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Read for the stand-in as well, they competed with the session's opening and were read
    # again once it was open.
    read_for: list[object] = []
    real_open = PromptPower.open

    async def recording(power: PromptPower, workspace: Path) -> list[str]:
        read_for.append(app.loop)
        return await real_open(power, workspace)

    monkeypatch.setattr(PromptPower, "open", recording)
    asked, gate, real = asyncio.Event(), asyncio.Event(), FakeLoop()

    async def opener() -> LoopApi:
        asked.set()  # the work after the first frame has begun
        await gate.wait()
        return real

    app = TuiAgentApp(OpeningLoop(INFO, opener))
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, asked.is_set)
        await pilot.pause()
        gate.set()
        await until(pilot, lambda: app.loop is real and bool(read_for))
        await pilot.pause()
    assert read_for == [real]
