"""A session log written by the loop before events took one path still resumes as it did.

`data/r3/` holds what one live session on the fake model left behind, written by the code of
round 3 (before `loop.transcript` built both the live and the replayed events): its event log
(`session.jsonl`: a retried attempt, a failing command, a `!command`, a steer, a cancelled tool,
a cancelled stream, a compaction, a notification and a failed turn), the loop events its
observers saw live (`live.jsonl`) and what replaying that log produced then (`replay.jsonl`).
The same session driven again must still publish those events and write a log that replays
the same way.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from tests.loop.test_service import held, of_type, recorder, until
from tests.support.fake_model import FakeModel, Step, calls, fail, text
from tui_agent.context import EventLog, read_log
from tui_agent.loop import events as ev
from tui_agent.loop.api import LoopInfo
from tui_agent.loop.factory import build_loop
from tui_agent.loop.replay import replay
from tui_agent.loop.service import LoopOptions
from tui_agent.vocab import LLMErrorKind, TextDelta

DATA = Path(__file__).parent / "data" / "r3"
_EVENTS: TypeAdapter[ev.LoopEvent] = TypeAdapter(ev.LoopEvent)


def _lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines()]


def _shown(events: Iterable[ev.LoopEvent]) -> list[tuple[Any, ...]]:
    """What a transcript draws of `events`: prompts, answers (an answer cut off while streaming
    stays as far as it came), calls with their status, steers, retries, compactions and each
    turn's closing marker; not ids, states or usage. A `!command`'s row is left out: live, the
    app draws it from the command it ran, and only the log's copy is replayed."""
    shown: list[tuple[Any, ...]] = []
    streamed = ""
    for event in events:
        match event:
            case ev.TurnStarted():
                shown.append(("turn", event.texts))
            case ev.AssistantDelta():
                streamed += event.text
            case ev.AttemptDiscarded():
                streamed = ""
            case ev.StepCompleted():
                streamed = ""
                if event.text or event.thinking:
                    shown.append(("answer", event.text, event.thinking))
            case ev.ToolStarted() if event.name != "!":
                shown.append(("call", event.id, event.name, event.arguments))
            case ev.ToolFinished() if event.name != "!":
                shown.append(("result", event.id, event.status, event.output, event.display))
            case ev.Drained():
                shown.append(("drained", event.texts))
            case ev.Retrying():
                shown.append(("retry", event.attempt, event.error_code))
            case ev.Compacted():
                shown.append(("compacted", event.summary))
            case ev.TurnFinished():
                if streamed:
                    shown.append(("answer", streamed, ""))
                    streamed = ""
                shown.append(("end", event.result.marker()))
    return shown


def _as_then(events: Iterable[ev.LoopEvent], then: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`events` as jsonl lines, each keeping only the fields its line of then had: events may
    gain fields (a cost on `usage` and `turn.finished` came after r3), never lose or change one,
    and a line that lost a field still differs. A different number of events is kept visible."""
    lines = [json.loads(event.model_dump_json()) for event in events]
    pairs = zip(lines, then, strict=False)  # a different count shows as the lines left over
    kept = [{k: v for k, v in line.items() if k in old} for line, old in pairs]
    return kept + lines[len(then) :]


def test_the_r3_log_replays_exactly_as_it_did_when_it_was_written() -> None:
    replayed = replay(read_log(DATA / "session.jsonl"), context_window=128_000)
    then = _lines("replay.jsonl")
    assert _as_then(replayed.events, then) == then


def test_the_resumed_r3_transcript_shows_what_the_live_session_showed() -> None:
    live = [_EVENTS.validate_python(line) for line in _lines("live.jsonl")]
    replayed = replay(read_log(DATA / "session.jsonl"), context_window=128_000)
    assert _shown(replayed.events) == _shown(live)
    # The totals a resumed status bar starts from are the live session's last.
    last = [e for e in live if isinstance(e, ev.UsageChanged)][-1]
    assert replayed.usage == last.total


async def _r3_session(tmp_path: Path) -> tuple[list[ev.LoopEvent], Path]:
    """The session `data/r3` was made from, driven the same way: its live events and its log."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("alpha\n")
    steer_step, steer_gate = held(calls(("read_file", {"path": "a.txt"}), prefix="s"))
    stream = Step([TextDelta(text="partial answ")], hold=asyncio.Event())
    model = FakeModel(
        [
            fail(LLMErrorKind.RATE_LIMIT, "slow down", status=429, retry_after_s=0.05),
            calls(
                ("read_file", {"path": "a.txt"}), ("shell", {"command": "exit 3"}), say="Looking."
            ),
            text("Read it."),
            steer_step,
            text("Done, and why."),
            calls(("shell", {"command": "sleep 30"}), prefix="c"),
            stream,
            text("First answer."),
            text("SUMMARY: the story so far."),
            text("After the summary."),
            text("Noted."),
            fail(LLMErrorKind.AUTH, "bad key", status=401),
        ]
    )
    log_path = tmp_path / "events.jsonl"
    service = await build_loop(
        provider=model,
        info=LoopInfo(
            provider="scripted",
            model=model.model,
            context_window=128_000,
            approval_mode="yolo",
            session_id="fixture-r3",
            workspace=str(workspace),
            demo=False,
        ),
        workspace=workspace,
        spill_dir=tmp_path / "spill",
        log=EventLog(log_path),
        system_prompt=lambda tools: "You are a test agent.",
        options=LoopOptions(abort_grace_s=0.5),
    )
    seen = recorder(service)
    await (await service.submit("read a and fail a command")).result()
    await service.record_user_command("ls", "a.txt\n", "done")
    steered = await service.submit("read a again")
    await until(lambda: len(model.requests) == 4)
    await service.submit("and say why", steer_if_active=True)
    steer_gate.set()
    await steered.result()
    await service.settled()
    sleeper = await service.submit("sleep")
    await until(lambda: any(e.id == "c_0" and e.state == "running" for e in _states(seen)))
    await service.cancel()
    await sleeper.result()
    story = await service.submit("write a story")
    await until(lambda: any(e.text == "partial answ" for e in of_type(seen, ev.AssistantDelta)))
    await service.cancel()
    await story.result()
    await (await service.submit("first")).result()
    await service.compact()
    await (await service.submit("after")).result()
    await service.notify("a note from outside")
    await service.settled()
    await (await service.submit("this one fails")).result()
    await service.settled()
    await service.close()
    return seen, log_path


def _states(events: list[ev.LoopEvent]) -> list[ev.ToolStateChanged]:
    return of_type(events, ev.ToolStateChanged)


def _comparable(event: dict[str, Any]) -> dict[str, Any]:
    """An event without what differs between runs: its time, a machine's random ids."""
    event = {key: value for key, value in event.items() if key not in ("ts", "machine_id")}
    if event["type"] == "machine.transition":
        event["event"] = re.sub(r"\.[0-9a-f]{8}$", "", event["event"])
    return event


def _with_shortcuts(then: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """r3's live events with the kernel's machine paths as they are since issue 29 (the
    inspector's `machine.transition` events only; no other event and nothing logged changes):

    - a tool call is born in `executing` (the after-tool hook never prepares): r3's
      `start -> preparing` becomes `start -> executing` and its `preparing -> executing` goes;
    - a result the hook takes at once settles the call: r3's `executing -> finishing` becomes
      `executing -> succeeded` and its `finishing -> succeeded` goes;
    - a turn whose tools settled with nothing to drain goes straight on: r3's
      `running -> draining`, `draining -> gating`, `gating -> streaming` (with no `drained` event
      among them) become one `running -> streaming`."""
    lines = [dict(line) for line in then]
    out: list[dict[str, Any]] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line["type"] != "machine.transition":
            out.append(line)
            continue
        move = (line["machine"], line["source"], line["target"])
        if move == ("tool", "", "preparing"):
            out.append({**line, "target": "executing"})
        elif move == ("tool", "preparing", "executing"):
            continue
        elif move == ("tool", "executing", "finishing"):
            out.append({**line, "target": "succeeded"})
            finished = _next_move(lines, index, line["machine_id"], "finishing", "succeeded")
            lines.pop(finished)
        elif move == ("turn", "running", "draining") and _nothing_drained(lines, index):
            out.append({**line, "target": "streaming"})
            del lines[index : index + 2]
        else:
            out.append(line)
    return out


def _next_move(lines: list[dict[str, Any]], start: int, machine_id: str, *move: str) -> int:
    return next(
        i
        for i in range(start, len(lines))
        if lines[i]["type"] == "machine.transition"
        and lines[i]["machine_id"] == machine_id
        and (lines[i]["source"], lines[i]["target"]) == move
    )


def _nothing_drained(lines: list[dict[str, Any]], start: int) -> bool:
    """The two lines after a turn's `running -> draining` are its walk on to streaming."""
    following = lines[start : start + 2]
    return [(line["type"], line.get("source"), line.get("target")) for line in following] == [
        ("machine.transition", "draining", "gating"),
        ("machine.transition", "gating", "streaming"),
    ]


async def test_the_live_loop_publishes_and_logs_what_it_did_when_r3_was_written(
    tmp_path: Path,
) -> None:
    seen, log_path = await _r3_session(tmp_path)
    then = _with_shortcuts(_lines("live.jsonl"))
    live = [_comparable(line) for line in _as_then(seen, then)]
    assert live == [_comparable(line) for line in then]
    replayed = replay(read_log(log_path), context_window=128_000).events
    then = _lines("replay.jsonl")
    now = [_comparable(line) for line in _as_then(replayed, then)]
    assert now == [_comparable(line) for line in then]
