"""A session log written by the loop before events took one path still resumes as it did.

`data/r3/` holds what one live session on the fake model left behind, written by the code of
round 3 (before `loop.transcript` built both the live and the replayed events): its event log
(`session.jsonl`: a retried attempt, a failing command, a `!command`, a steer, a cancelled tool,
a cancelled stream, a compaction, a notification and a failed turn), the loop events its
observers saw live (`live.jsonl`) and what replaying that log produced then (`replay.jsonl`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from tui_agent.context import read_log
from tui_agent.loop import events as ev
from tui_agent.loop.replay import replay

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


def test_the_r3_log_replays_exactly_as_it_did_when_it_was_written() -> None:
    replayed = replay(read_log(DATA / "session.jsonl"), context_window=128_000)
    assert [json.loads(e.model_dump_json()) for e in replayed.events] == _lines("replay.jsonl")


def test_the_resumed_r3_transcript_shows_what_the_live_session_showed() -> None:
    live = [_EVENTS.validate_python(line) for line in _lines("live.jsonl")]
    replayed = replay(read_log(DATA / "session.jsonl"), context_window=128_000)
    assert _shown(replayed.events) == _shown(live)
    # The totals a resumed status bar starts from are the live session's last.
    last = [e for e in live if isinstance(e, ev.UsageChanged)][-1]
    assert replayed.usage == last.total
