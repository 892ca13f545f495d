"""The conductor: runs a session's log again through a real loop and compares what it writes.

It builds the loop of `factory.build_loop` (the kernel's machines, the service, the executor
and its scheduler) with the recorded model (`_provider.py`) and the recorded tools
(`_tools.py`), in a scratch folder: the session's workspace is never touched. It issues the
person's inputs (`_script.py`) once the rerun has written the records that came before them,
stops the turn where the log shows it was cancelled, and ends the process where the log shows
a crash, then resumes from the log as `session.open_loop` does (`fold`, `replay`).

Every record the rerun writes is compared, normalised (`_normal.py`), with the log's record at
the same position; the first difference is the `Divergence`. Records of kinds the loop does
not write itself (`_script.DRIVEN`: the first line, `!command`s, checkpoints, rewinds, kinds a
newer version adds) are copied from the log into the rerun's as their turn comes.

A `Pace` slows the rerun for the player: it is awaited before every chunk of the model's
answer, every tool result and every input; `checking` has none.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from tui_agent.context import (
    Compaction,
    EventLog,
    Record,
    RetryRecorded,
    SessionMeta,
    TurnEnd,
    fold,
)
from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop import events as ev
from tui_agent.loop.api import LoopInfo
from tui_agent.loop.factory import build_loop
from tui_agent.loop.hooks import Next, StepBeginContext
from tui_agent.loop.replay import replay
from tui_agent.loop.service import AgentLoopService, LoopOptions
from tui_agent.loop.subagent import SubagentOptions
from tui_agent.loop.turn_model import TurnModel
from tui_agent.rerun._approvals import LoggedApprovals
from tui_agent.rerun._normal import Normaliser
from tui_agent.rerun._provider import RecordedModel
from tui_agent.rerun._script import Input, Life, ModelCall, Stop, read_script
from tui_agent.rerun._tools import Cue, recorded_tools
from tui_agent.usage import Pricer

CONTEXT_WINDOW = 200_000  # only the usage bar reads it: the rerun compacts where the log did
STALL_S = 30.0  # no record for this long while nothing is due: the rerun is stuck
_YIELDS = 20  # turns of the event loop a settled loop is given to show it is not done


class Pace(Protocol):
    async def beat(self, position: int, record: Record | None) -> None:
        """Before the next recorded thing happens: the rerun has written `position` records,
        `record` is the log's next."""
        ...

    async def sleep(self, seconds: float) -> None:
        """The kernel's waits (retry backoff)."""
        ...


class _Flat:
    async def beat(self, position: int, record: Record | None) -> None:
        return None

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(0)


@dataclass(frozen=True)
class Divergence:
    """The first record where the rerun and the log part: `index` counts from 0."""

    index: int
    expected: dict[str, Any] | None  # normalised; None: the log had ended
    got: dict[str, Any] | None  # None: the rerun wrote nothing there
    why: str = ""


class _ObservedLog(EventLog):
    """The rerun's log: every record the loop writes is shown to the conductor."""

    def __init__(self, path: Path, observe: Callable[[Record], None]) -> None:
        super().__init__(path, fsync=False)
        self.observe = observe

    def write(self, record: Record) -> None:
        super().write(record)
        self.observe(record)

    def copy(self, record: Record) -> None:
        super().write(record)


class Conductor:
    def __init__(
        self,
        records: Sequence[Record],
        workdir: Path,
        *,
        pace: Pace | None = None,
        stall_s: float = STALL_S,
    ) -> None:
        self.records = list(records)
        self.script = read_script(self.records)
        self.workdir = workdir
        self.pace: Pace = pace or _Flat()
        self.stall_s = stall_s
        self.position = 0
        self.divergence: Divergence | None = None
        self.service: AgentLoopService | None = None
        # The player follows the lives: a loop built, a loop about to close.
        self.on_service: Callable[[AgentLoopService], None] = lambda service: None
        self.on_closing: Callable[[AgentLoopService], None] = lambda service: None
        self.on_progress: Callable[[], None] = lambda: None  # a record written, or copied
        self.on_copied: Callable[[Record], None] = lambda record: None
        self._expected, self._got = Normaliser(), Normaliser()
        self._calls = list(self.script.model_calls)
        self._inputs = list(self.script.inputs)
        self._changed = asyncio.Event()
        self._crashed = asyncio.Event()
        self._feeding = asyncio.Lock()
        self._cancelled = False  # this turn's cancel was issued
        self._streaming = 0  # the model's answers under way (the loop may look settled)
        self._settling: asyncio.Future[Any] | None = None
        self._log: _ObservedLog | None = None
        self._life = Life(0, len(self.records))
        self._tasks: set[asyncio.Task[None]] = set()

    # -- the run -------------------------------------------------------------------------------
    async def run(self) -> Divergence | None:
        lives = self.script.lives
        for number, life in enumerate(lives):
            self._life = life
            self._crashed = asyncio.Event()
            self._settling = None
            service = await self._build(number, life)
            try:
                await self._drive(life)
            finally:
                await self._end(service)
            if self.divergence is not None:
                break
        return self.divergence

    async def _build(self, number: int, life: Life) -> AgentLoopService:
        before = self.records[: life.start]
        meta = next((r for r in self.records if isinstance(r, SessionMeta)), None)
        workspace = self.workdir / "workspace"
        workspace.mkdir(parents=True, exist_ok=True)
        self._log = _ObservedLog(self.workdir / f"events-{number}.jsonl", self._observe)
        self._pass_through()
        info = LoopInfo(
            provider=(meta.provider if meta else None) or "scripted",
            model=(meta.model if meta else None) or "recorded",
            context_window=CONTEXT_WINDOW,
            # A log from before the mode was kept: what the person decided is in the results.
            approval_mode=(meta.approval_mode if meta else None) or "yolo",
            session_id=meta.session_id if meta else "rerun",
            workspace=str(workspace),
            demo=False,
        )
        service = await build_loop(
            provider=RecordedModel(self, info.provider, info.model),
            info=info,
            workspace=workspace,
            spill_dir=self.workdir / "spill",
            log=self._log,
            system_prompt=lambda tools: "",
            history=fold(before),
            transcript=replay(before, context_window=CONTEXT_WINDOW),
            interactive=bool(self.script.answers),  # asked where the log's person was
            approvals_type=functools.partial(LoggedApprovals, self.script.answers),
            options=self._options(),
            subagent_options=SubagentOptions(max_depth=0),  # `task` answers from the log
            replace_tools=recorded_tools(self.script, Cue(self.reached, self.halt)),
            turn_models=_recorded_model,
        )
        # The step gate's compaction estimates tokens over a system prompt the log does not
        # hold: the rerun compacts where the log did instead.
        service.on_will_begin_step.register("compaction", self._compaction_gate(service))
        service.subscribe(self._on_event)
        self.service = service
        self.on_service(service)
        return service

    def _options(self) -> LoopOptions:
        retries = [r.max_attempts for r in self.records if isinstance(r, RetryRecorded)]
        limits = [
            r.result.steps
            for r in self.records
            if isinstance(r, TurnEnd)
            and r.result.error is not None
            and r.result.error.get("code") == "loop.max_steps_exceeded"
        ]
        defaults = LoopOptions()
        return LoopOptions(
            max_steps=min(limits) if limits else 0,
            max_attempts_per_step=max(retries) if retries else defaults.max_attempts_per_step,
            sleep=self._sleep,
            random=lambda: 0.5,
        )

    async def _sleep(self, seconds: float) -> None:
        """The kernel's waits: the abort timeouts in real time (the stopped tools beat them,
        as they did live), a retry's backoff at the player's pace (not at all when checking)."""
        defaults = LoopOptions()
        if seconds in (defaults.abort_grace_s, defaults.abort_timeout_s):
            await asyncio.sleep(seconds)
        else:
            await self.pace.sleep(seconds)

    def _compaction_gate(
        self, service: AgentLoopService
    ) -> Callable[[StepBeginContext, Next[StepBeginContext]], Any]:
        async def gate(ctx: StepBeginContext, next_: Next[StepBeginContext]) -> None:
            if isinstance(self._next_record(), Compaction):
                await service.compact_history(ctx.history)
            await next_(None)

        return gate

    async def _drive(self, life: Life) -> None:
        while self.divergence is None:
            if self._feeding.locked():  # an input on its way (paced, or a /compact running)
                async with self._feeding:
                    continue
            if await self.feed():
                continue
            if self.position >= life.end and (life.crashed or self._crashed.is_set()):
                return
            settled = self._settled()
            changed: asyncio.Future[Any] = asyncio.ensure_future(self._changed.wait())
            done, _ = await asyncio.wait(
                {settled, changed}, timeout=self.stall_s, return_when=asyncio.FIRST_COMPLETED
            )
            changed.cancel()
            if changed in done:
                continue
            if settled in done and self._streaming:
                await self._changed.wait()  # an answer (a compaction's) is still streaming
                continue
            if settled in done and await self.feed():
                continue
            if settled in done and not await self._still_settled():
                continue
            if self.position >= life.end:
                if settled in done:
                    return  # the life's records are all written and the loop is at rest
                continue
            why = "the loop stopped" if settled in done else "the rerun stalled"
            self._diverge(None, why)

    def _settled(self) -> asyncio.Future[Any]:
        """`service.settled()`, one at a time and never cancelled: it gathers the loop's own
        tasks (error handlers), and cancelling it would cancel them."""
        assert self.service is not None
        if self._settling is None or self._settling.done():
            self._settling = asyncio.ensure_future(self.service.settled())
        return self._settling

    async def _still_settled(self) -> bool:
        """Whether the loop is still at rest after everything ready to run has run: an error
        handler's task (a compaction after an overflow) starts a moment after the turn that
        failed has settled."""
        assert self.service is not None
        position = self.position
        for _ in range(_YIELDS):
            await asyncio.sleep(0)
        await self._settled()
        return self.position == position and not self._streaming

    async def _end(self, service: AgentLoopService) -> None:
        """Ends a life's loop; what it writes while dying is not compared (a crash, or the
        run's end)."""
        if self._log is not None:
            self._log.observe = lambda record: None
        self.on_closing(service)
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            await service.close()

    # -- what the rerun writes -----------------------------------------------------------------
    def _observe(self, record: Record) -> None:
        if self.divergence is not None:
            return
        if self.position >= self._life.end:
            self._diverge(record, "the log has no more records here")
            return
        expected = self._expected(self.records[self.position])
        got = self._got(record)
        if expected != got:
            self.divergence = Divergence(self.position, expected, got)
        else:
            self.position += 1
            if isinstance(record, TurnEnd):
                self._cancelled = False
            self._pass_through()
        self._poke()

    def _pass_through(self) -> None:
        assert self._log is not None
        while self.position < self._life.end:
            record = self.records[self.position]
            if self.script.driven(self.position):
                return
            self._log.copy(record)
            self.position += 1
            self.on_copied(record)

    def _diverge(self, got: Record | None, why: str) -> None:
        expected = self._next_record()
        self.divergence = Divergence(
            self.position,
            self._expected(expected) if expected is not None else None,
            self._got(got) if got is not None else None,
            why,
        )
        self._poke()

    def _next_record(self) -> Record | None:
        return self.records[self.position] if self.position < len(self.records) else None

    def _poke(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()
        self.on_progress()

    # -- the person's answers ------------------------------------------------------------------
    def _on_event(self, event: ev.LoopEvent) -> None:
        if isinstance(event, ev.ApprovalRequested):
            task = asyncio.create_task(self._answer(event))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _answer(self, request: ev.ApprovalRequested) -> None:
        """Answers as the log did, once the rerun has written every record before the
        answer (the player's bar waits there); a request withdrawn live (the turn cancelled,
        the call stopped) is withdrawn the same way."""
        answer = self.script.answers[request.call_id]
        await self.reached(self.script.answered_at[request.call_id])
        service = self.service
        assert service is not None
        if answer.stop is not None:
            await self._halt(answer.stop, request.call_id, paced=False)
            return
        await service.answer_approval(
            request.request_id, answer.decision, answer.reason, keep=answer.keep, mode=answer.mode
        )

    # -- the stage the recorded model and tools act on -----------------------------------------
    def next_call(self) -> ModelCall | None:
        if not self._calls:
            return None
        self._streaming += 1
        return self._calls.pop(0)

    def call_ended(self) -> None:
        self._streaming -= 1
        self._poke()

    async def beat(self) -> None:
        await self.feed()
        await self._beat()

    async def reached(self, count: int) -> None:
        """Until the rerun has written `count` records of the log (forever once it diverged:
        the run then closes the loop), then at the player's pace."""
        while self.position < count or self.divergence is not None:
            await self._changed.wait()
        await self.feed()
        await self._beat()

    async def _beat(self) -> None:
        await self.pace.beat(self.position, self._next_record())

    async def halt(self, stop: Stop, call_id: str | None) -> None:
        """The log shows the run stopped here. Issued from a task of its own: the stop
        cancels the very stream or tool that asks for it."""
        task = asyncio.create_task(self._halt(stop, call_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _halt(self, stop: Stop, call_id: str | None, *, paced: bool = True) -> None:
        """`paced`: the person's pace is awaited first (an answer withdrawn has been already)."""
        service = self.service
        assert service is not None
        if stop == "crash":
            self._crashed.set()
            self._poke()
        elif stop == "stop_call" and call_id is not None:
            if paced:
                await self._beat()
            await service.cancel_tool(call_id)
        elif not self._cancelled:
            self._cancelled = True
            if paced:
                await self._beat()
            await service.cancel()

    async def forever(self) -> None:
        await asyncio.get_running_loop().create_future()

    async def feed(self) -> bool:
        """Issues the person's inputs that are due; True when it issued any."""
        issued = False
        if self._feeding.locked():
            return False  # an input being issued (a /compact) runs the model: not again
        async with self._feeding:
            # An input due where a life ends is the next process's first.
            while self._inputs and self._inputs[0].after <= self.position < self._life.end:
                if self.divergence is not None:
                    break
                item = self._inputs.pop(0)
                await self._beat()
                await self._issue(item)
                issued = True
        return issued

    async def _issue(self, item: Input) -> None:
        service = self.service
        assert service is not None
        if item.kind == "submit":
            await service.submit(item.text, draft=item.draft, images=item.images, model=item.model)
        elif item.kind == "steer":
            await service.submit(item.text, steer_if_active=True)
        elif item.kind == "notify":
            await service.notify(item.text)
        else:
            await service.compact()


def _recorded_model(name: str) -> TurnModel:
    """The recorded model answers for every model a logged prompt asked its turn to run on."""
    return TurnModel(name, Pricer(name, provider=""))
