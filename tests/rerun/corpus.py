"""Sessions made by scripted runs of the real loop, for the rerun tests to check.

`build_corpus(home, workspace)` drives the fake model through two sessions, each a real
session folder under `home` (so `replay --check --all` finds them):

- `story`: parallel tool calls after a retried HTTP 500, a steer, two queued prompts drained
  into one turn, a command cancelled while it ran, a stream cancelled mid-answer, a context
  overflow compacted on the spot, a `/compact`, a notification, a plan and a sub-agent
  (`task`, with its own log in `tasks/`);
- `crash`: a turn cut off mid-answer by a crash (the log stops there), then the session
  resumed from its folded log, as `--resume` does, and one more turn;
- `asked`: a session in `ask` mode where the person allows one command once, denies one with
  feedback and allows one always (a rule, which lets the same command run unasked after), then
  cancels a turn while its call waits to be approved and stops another such call.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tests.loop.test_service import held, until
from tests.support.fake_model import FakeModel, Step, calls, fail, text
from tui_agent.context import EventLog, SessionMeta, fold, read_log
from tui_agent.loop import events as ev
from tui_agent.loop.api import ApprovalDecision, LoopInfo
from tui_agent.loop.factory import build_loop
from tui_agent.loop.replay import replay
from tui_agent.loop.service import AgentLoopService, LoopOptions
from tui_agent.session import AppPaths, Session
from tui_agent.vocab import ApprovalMode, LLMErrorKind, TextDelta


@dataclass(frozen=True)
class Corpus:
    story: Session
    crash: Session
    asked: Session


def _task(description: str, prompt: str) -> tuple[str, dict[str, Any]]:
    return ("task", {"description": description, "prompt": prompt})


async def _loop(
    session: Session,
    model: FakeModel,
    records: list[Any] | None = None,
    mode: ApprovalMode = "yolo",
) -> Any:
    log = EventLog(session.events_path)
    if records is None:
        log.write(
            SessionMeta(
                session_id=session.session_id,
                workspace=str(session.workspace),
                approval_mode=mode,
            )
        )
    return await build_loop(
        provider=model,
        info=LoopInfo(
            provider="scripted",
            model=model.model,
            context_window=128_000,
            approval_mode=mode,
            session_id=session.session_id,
            workspace=str(session.workspace),
            demo=False,
        ),
        workspace=session.workspace,
        spill_dir=session.spill_dir,
        log=log,
        system_prompt=lambda tools: "You are a test agent.",
        history=fold(records or []),
        transcript=replay(records, context_window=128_000) if records else None,
        options=LoopOptions(abort_grace_s=0.5),
    )


async def _story(session: Session) -> None:
    steer_step, steer_gate = held(calls(("read_file", {"path": "a.txt"}), prefix="s"))
    queue_step, queue_gate = held(text("Working on it."))
    stream = Step([TextDelta(text="partial answ")], hold=asyncio.Event())
    model = FakeModel(
        [
            fail(LLMErrorKind.STATUS, "server error", status=500),
            calls(
                ("read_file", {"path": "a.txt"}), ("shell", {"command": "echo hi"}), say="Looking."
            ),
            text("Read it."),
            steer_step,
            text("Done, and why."),
            queue_step,
            text("Both at once."),
            calls(("shell", {"command": "sleep 30"}), prefix="c"),
            stream,
            fail(LLMErrorKind.CONTEXT_OVERFLOW, "too long"),
            text("SUMMARY: shorter."),
            text("After the summary."),
            text("SUMMARY: the story so far."),
            text("Noted."),
            calls(("todo_write", {"todos": [{"content": "ask", "status": "in_progress"}]})),
            calls(_task("look", "CHILD: read a.txt"), prefix="t"),
            calls(("read_file", {"path": "a.txt"}), prefix="k"),  # the child's step
            text("alpha, says the child."),
            text("The child read it."),
        ]
    )
    service: AgentLoopService = await _loop(session, model)
    await (await service.submit("read a and say hi")).result()
    steered = await service.submit("read a again")
    await until(lambda: len(model.requests) == 4)
    await service.submit("and say why", steer_if_active=True)
    steer_gate.set()
    await steered.result()
    await service.settled()
    first = await service.submit("start")
    await until(lambda: len(model.requests) == 6)
    queued = [await service.submit("one"), await service.submit("two")]
    queue_gate.set()
    await first.result()
    await queued[1].result()
    sleeper = await service.submit("sleep")
    await until(lambda: any(t.call_id == "c_0" and t.state == "running" for t in _tools(service)))
    await service.cancel()
    await sleeper.result()
    story = await service.submit("write a story")
    await until(lambda: len(model.requests) == 9)
    await service.cancel()
    await story.result()
    await (await service.submit("go on")).result()
    await service.compact()
    await service.notify("a note from outside")
    await service.settled()
    await (await service.submit("ask a child")).result()
    await service.settled()
    await service.close()


def _tools(service: AgentLoopService) -> Any:
    return service.snapshot().tools


async def _crash(session: Session) -> None:
    stream = Step([TextDelta(text="half an ans")], hold=asyncio.Event())
    model = FakeModel([text("First."), stream])
    service: AgentLoopService = await _loop(session, model)
    await (await service.submit("first")).result()
    await service.submit("second")
    # The process dies mid-answer: the log keeps what was on disk, the loop is never closed.
    await until(lambda: session.events_path.read_text().count('"type":"step.begin"') == 2)
    torn = session.events_path.read_bytes()
    await service.close()
    session.events_path.write_bytes(torn)
    records = read_log(session.events_path)
    resumed: AgentLoopService = await _loop(session, FakeModel([text("Picked up.")]), records)
    await (await resumed.submit("are you there")).result()
    await resumed.settled()
    await resumed.close()


# The person's answers in `asked`, in the order the bar shows the calls; "cancel" cancels the
# turn while the bar waits, "stop" stops that one call.
ANSWERS: tuple[tuple[ApprovalDecision | Literal["cancel", "stop"], str | None], ...] = (
    ("once", None),
    ("deny", "not that one, it is too loud"),
    ("always", None),
    ("cancel", None),
    ("stop", None),
)


async def _asked(session: Session) -> None:
    model = FakeModel(
        [
            calls(("shell", {"command": "echo one"}), prefix="a"),
            calls(("shell", {"command": "echo two"}), prefix="b"),
            calls(("shell", {"command": "echo three"}), prefix="c"),
            calls(("shell", {"command": "echo three"}), prefix="d"),  # the rule allows it
            text("Ran them."),
            calls(("shell", {"command": "ls"}), prefix="e"),
            calls(("shell", {"command": "ls -a"}), prefix="f"),
            text("Stopped."),
        ]
    )
    service: AgentLoopService = await _loop(session, model, mode="ask")
    answers = iter(ANSWERS)
    answered: set[asyncio.Task[Any]] = set()

    def answer(event: ev.LoopEvent) -> None:
        if isinstance(event, ev.ApprovalRequested):
            decision, reason = next(answers)
            if decision == "cancel":
                task: asyncio.Task[Any] = asyncio.create_task(service.cancel())
            elif decision == "stop":
                task = asyncio.create_task(service.cancel_tool(event.call_id))
            else:
                task = asyncio.create_task(
                    service.answer_approval(event.request_id, decision, reason)
                )
            answered.add(task)

    service.subscribe(answer)
    await (await service.submit("run the echoes")).result()
    await (await service.submit("list the files")).result()  # cancelled while asked
    await (await service.submit("list them all")).result()  # the call stopped while asked
    await service.settled()
    await service.close()


def build_corpus(home: Path, workspace: Path) -> Corpus:
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "a.txt").write_text("alpha\n")
    paths = AppPaths.from_env({"TUI_AGENT_HOME": str(home)})
    story = Session.create(workspace, paths=paths)
    crash = Session.create(workspace, paths=paths)
    asked = Session.create(workspace, paths=paths)

    async def run() -> None:
        await _story(story)
        await _crash(crash)
        await _asked(asked)

    asyncio.run(run())
    return Corpus(story, crash, asked)
