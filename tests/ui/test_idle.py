"""An app left alone does nothing: its cursor stops blinking (each blink is a frame) a while
after the last key, and blinks again at the next one."""

from __future__ import annotations

from tests.ui.fake_loop import FakeLoop
from tests.ui.real_loop import until
from tests.ui.test_keys import Clock, running
from tui_agent.ui.app import TuiAgentApp


async def test_the_cursor_stops_blinking_without_keys_and_blinks_again_at_a_key() -> None:
    app = TuiAgentApp(FakeLoop(), clock=Clock())
    prompt = app.prompt_input
    prompt.blink_for_s = 0.001  # no key since the start is long enough
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: not prompt.cursor_blink)
        prompt.blink_for_s = 3600.0
        await pilot.press("a")
        assert prompt.cursor_blink
        assert prompt.text == "a"


async def test_a_steady_cursor_asked_for_stays_steady_when_keys_come() -> None:
    async with running() as (app, pilot, _loop):
        app.prompt_input.cursor_blink = False  # as the screenshots ask
        await pilot.press("a")
        assert not app.prompt_input.cursor_blink
