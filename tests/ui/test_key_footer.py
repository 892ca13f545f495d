"""The footer redraws its keys only when they change, and keeps no key it removed alive."""

from __future__ import annotations

import gc

from textual.widget import Widget
from textual.widgets import Footer

from tests.ui.real_loop import until
from tests.ui.test_keys import running, turn_running
from tui_agent.loop import events as ev
from tui_agent.ui.app import TuiAgentApp


def keys_in(app: TuiAgentApp) -> list[Widget]:
    return list(app.screen.query_one(Footer).query("FooterKey"))


def descriptions(app: TuiAgentApp) -> list[str]:
    return [str(getattr(key, "description", "")) for key in keys_in(app)]


async def test_a_bindings_change_that_shows_the_same_keys_draws_nothing() -> None:
    async with running() as (app, pilot, _loop):
        keys = keys_in(app)
        assert keys
        app.screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert keys_in(app) == keys  # the same widgets: no recompose


async def test_turns_leave_no_removed_footer_key_alive() -> None:
    # Each recompose's keys watch the footer (`data_bind`); Textual forgot a removed key's
    # watcher only when the footer's `compact` changed, so every turn left keys behind.
    async with running() as (app, pilot, loop):
        for turn in range(1, 6):
            turn_running(loop)
            await until(pilot, lambda: "Cancel" in descriptions(app))
            result = ev.TurnResult(type="completed", steps=1)
            loop.emit(ev.TurnFinished(turn_id=turn, text="", result=result))
            await until(pilot, lambda: "Clear" in descriptions(app))
        await until(pilot, lambda: removed_keys_alive(app) == 0)


def removed_keys_alive(app: TuiAgentApp) -> int:
    keys = keys_in(app)
    shown, key_type = {id(key) for key in keys}, type(keys[0])
    gc.collect()
    return sum(isinstance(o, key_type) and id(o) not in shown for o in gc.get_objects())
