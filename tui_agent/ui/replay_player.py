"""The replay player (`tui-agent replay SESSION`): the app, watching a session run again.

The app is the everyday one, attached to the loop a `rerun.Conductor` builds in a scratch
folder: the transcript, panes, status bar and F2 inspector show what the rerun's machines do,
which is what the person saw (prompts, steers, queued prompts and cancels come in where the
log has them; the tools answer from the log and never touch the workspace). The prompt is
read-only; a bar above the status line says where the playback is. The approval bar shows
where the person was asked and holds there until the log's answer is given (the person's own
keys on it are not taken). Keys: space
pause/resume; → one recorded event (a chunk of an answer, a tool's result, an input of the
person; the machines take every transition it leads to); Shift+→ to the end of the step; ]
to the end of the turn; + and - the speed.
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

from textual import events, on
from textual.binding import Binding, BindingType
from textual.widgets import Static

from tui_agent.context import Record, SessionMeta, UserCommand, read_log
from tui_agent.loop import transcript
from tui_agent.loop.api import LoopApi, LoopInfo
from tui_agent.rerun import Conductor, PlayerPace, Unreplayable, Verdict
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.opening import OpeningLoop
from tui_agent.ui.widgets.approval_bar import ApprovalBar


class ReplayPlayer(TuiAgentApp):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "toggle_play", "Play/pause", priority=True),
        Binding("right", "step_event", "Event", priority=True),
        Binding("shift+right", "step_step", "Step", priority=True),
        Binding("right_square_bracket", "next_turn", "Turn", priority=True),
        Binding("plus", "faster", "Faster", priority=True),
        Binding("minus", "slower", "Slower", priority=True),
    ]
    # The app sends printable keys to the prompt before any binding sees them: the player's
    # keys are taken first (there is nothing to type during a replay).
    _PLAYER_KEYS: ClassVar[dict[str, str]] = {
        binding.key: binding.action for binding in BINDINGS if isinstance(binding, Binding)
    }

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
        self._commands = 0  # `!command` rows drawn
        super().__init__(OpeningLoop(_info(records, workdir), self._start), clock=clock)

    def on_mount(self) -> None:
        # Textual runs the app's own `on_mount` first (handlers run up the class tree). The
        # person watches: the log types (the app's flows keep the prompt box on screen).
        self.prompt_input.read_only = True
        self.prompt_input.border_title = "replay: nothing to type here"
        self.call_after_refresh(self._mount_bar)

    def _mount_bar(self) -> None:
        self.main_screen.mount(self.replay_bar, before=self.status_bar)
        self.pace.on_change = self.show_progress
        self.conductor.on_progress = self.show_progress
        self.conductor.on_copied = self._copied
        self.show_progress()

    async def on_event(self, event: events.Event) -> None:
        action = self._PLAYER_KEYS.get(event.key) if isinstance(event, events.Key) else None
        if action is not None and len(self.screen_stack) == 1:
            event.stop()
            await self.run_action(action)
            return
        await super().on_event(event)

    @on(ApprovalBar.Answered)
    def _recorded_answer_only(self, message: ApprovalBar.Answered) -> None:
        """The log answers the bar at its point (→ gives it): an answer of the person's would
        make another session. Before the app's own handler, which this one keeps from it."""
        message.prevent_default()
        self.notify("The recorded answer is given at its point (→ plays on to it).")

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

    def _copied(self, record: Record) -> None:
        """A record the loop does not write (a `!command`, restored files) is drawn as a
        resumed session draws it: the rerun copies it, the person saw it."""
        if isinstance(record, UserCommand):
            self._commands += 1
            for row in transcript.user_command(record, f"replayed-{self._commands}"):
                self._on_loop_event(row)
            return
        standalone = transcript.event_of(record, 0)  # the turn id only names a retry's turn
        if standalone is not None:
            self._on_loop_event(standalone)

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

    async def on_unmount(self) -> None:
        await self.stop()  # the app is closing: so is the rerun

    async def stop(self) -> None:
        """Ends the rerun (the app quit while it played)."""
        self.pace.release()
        if self._run is not None:
            self._run.cancel()
            with contextlib.suppress(BaseException):
                await self._run
        service = self.conductor.service
        if service is not None:
            await service.close()  # a second close returns at once

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
        self._play_past("step.end")

    def action_next_turn(self) -> None:
        self._play_past("turn.end")

    def _play_past(self, kind: str) -> None:
        """Plays until the rerun has written the next record of `kind`."""
        records, start = self.conductor.records, self.conductor.position
        self.pace.run_until(
            lambda written: any(record.type == kind for record in records[start:written])
        )

    def action_faster(self) -> None:
        self.pace.faster(1)

    def action_slower(self) -> None:
        self.pace.faster(-1)


def _info(records: list[Record], workdir: Path) -> LoopInfo:
    # A log without its header names no workspace: the rerun's own folder stands in, so the
    # status bar never reads the git state of whatever folder the player was started from.
    meta = next((record for record in records if isinstance(record, SessionMeta)), None)
    return LoopInfo(
        provider=(meta.provider if meta else None) or "replay",
        model=(meta.model if meta else None) or "recorded",
        context_window=0,
        approval_mode=(meta.approval_mode if meta else None) or "yolo",
        session_id=meta.session_id if meta else "",
        workspace=meta.workspace if meta else str(workdir),
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
