"""The replay player (`tui-agent replay SESSION`): the app, watching a session run again.

The app is the everyday one, attached to the loop a `rerun.Conductor` builds in a scratch
folder: the transcript, panes, status bar and F2 inspector show what the rerun's machines do,
which is what the person saw (prompts, steers, queued prompts and cancels come in where the
log has them; the tools answer from the log and never touch the workspace). The prompt gives
way to a bar that says where the playback is. Keys: space pause/resume; → one recorded event
(a chunk of an answer, a tool's result, an input of the person; the machines take every
transition it leads to); Shift+→ to the next step; ] to the next turn; + and - the speed.
After a crash in the log, the next process's loop replaces the first, as `--resume` did.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Static

from tui_agent.context import Record, SessionMeta, read_log
from tui_agent.loop.api import LoopApi, LoopInfo
from tui_agent.rerun import Conductor, PlayerPace, Unreplayable, Verdict
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.opening import OpeningLoop


class ReplayPlayer(TuiAgentApp):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "toggle_play", "Play/pause", priority=True),
        Binding("right", "step_event", "Event", priority=True),
        Binding("shift+right", "step_step", "Step", priority=True),
        Binding("right_square_bracket", "next_turn", "Turn", priority=True),
        Binding("plus", "faster", "Faster", priority=True),
        Binding("minus", "slower", "Slower", priority=True),
    ]

    def __init__(
        self,
        records: list[Record],
        workdir: Path,
        *,
        paused: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.pace = PlayerPace(paused=paused)
        self.conductor = Conductor(records, workdir, pace=self.pace)  # Unreplayable: says why
        self.verdict: Verdict | None = None
        self.replay_bar = Static("", id="replay-bar", markup=False)
        self._first: asyncio.Future[LoopApi] | None = None
        self._run: asyncio.Task[None] | None = None
        super().__init__(OpeningLoop(_info(records), self._start), clock=clock)

    def on_mount(self) -> None:
        super().on_mount()
        self.prompt_input.display = False  # the person watches; the log types
        self.call_after_refresh(self._mount_bar)

    def _mount_bar(self) -> None:
        self.main_screen.mount(self.replay_bar, before=self.status_bar)
        self.pace.on_change = self.show_progress
        self.show_progress()

    async def _start(self) -> LoopApi:
        self._first = asyncio.get_running_loop().create_future()
        self.conductor.on_service = self._attach_rerun
        self.conductor.on_closing = lambda service: self._detach_loop()
        self._run = asyncio.create_task(self._play())
        return await self._first

    def _attach_rerun(self, loop: LoopApi) -> None:
        if self._first is not None and not self._first.done():
            self._first.set_result(loop)  # the app attaches the first loop itself
            return
        self._attach_loop(loop)  # the next process after a crash, resumed from the log

    async def _play(self) -> None:
        records = len(self.conductor.records)
        try:
            divergence = await self.conductor.run()
        except Exception as exc:  # the app stays up to say so
            if self._first is not None and not self._first.done():
                self._first.set_exception(exc)
            raise
        self.verdict = Verdict(records, divergence)
        self.show_progress()

    async def stop(self) -> None:
        """Ends the rerun (the app quit while it played)."""
        if self._run is not None:
            self._run.cancel()
            with contextlib.suppress(BaseException):
                await self._run
        service = self.conductor.service
        if service is not None:
            await service.close()

    def show_progress(self) -> None:
        conductor, pace = self.conductor, self.pace
        where = f"record {conductor.position} of {len(conductor.records)}"
        if self.verdict is not None:
            state = "■ finished: " + self.verdict.describe().splitlines()[0]
        else:
            state = f"{'❚❚ paused' if pace.paused else '▶ playing'} ×{pace.speed:g} · {where}"
        keys = "space pause · → event · shift+→ step · ] turn · +/- speed · F2 machines"
        self.replay_bar.update(f"replay  {state}  ·  {keys}")

    # -- keys -----------------------------------------------------------------------------------
    def action_toggle_play(self) -> None:
        self.pace.toggle()

    def action_step_event(self) -> None:
        self.pace.step()

    def action_step_step(self) -> None:
        self.pace.run_until("step.begin", self.conductor.position)

    def action_next_turn(self) -> None:
        self.pace.run_until("turn.begin", self.conductor.position)

    def action_faster(self) -> None:
        self.pace.faster(1)

    def action_slower(self) -> None:
        self.pace.faster(-1)


def _info(records: list[Record]) -> LoopInfo:
    meta = next((record for record in records if isinstance(record, SessionMeta)), None)
    return LoopInfo(
        provider=(meta.provider if meta else None) or "replay",
        model=(meta.model if meta else None) or "recorded",
        context_window=0,
        approval_mode="yolo",
        session_id=meta.session_id if meta else "",
        workspace=meta.workspace if meta else "",
        demo=False,
    )


def play(events: Path) -> int:
    """The player on the log at `events`; exit status 1 when the log cannot be replayed."""
    bad_lines: list[int] = []
    records = read_log(events, bad_lines)
    if bad_lines:
        print(f"tui-agent replay: line {bad_lines[0]} is not a record", file=sys.stderr)
        return 1
    return asyncio.run(_play(records))


async def _play(records: list[Record]) -> int:
    with tempfile.TemporaryDirectory(prefix="tui-agent-replay-") as scratch:
        try:
            app = ReplayPlayer(records, Path(scratch))
        except Unreplayable as exc:
            print(f"tui-agent replay: cannot replay: {exc}", file=sys.stderr)
            return 1
        try:
            await app.run_async()
        finally:
            await app.stop()
    return app.return_code or 0
