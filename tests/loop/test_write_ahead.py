"""Write-ahead: what the loop reports is on disk first (flushed and fsynced).

A prompt's record is durable before `turn.started`, a tool's result before `tool.finished`, and
nothing goes to the model before the history it is built from is durable. `os.fsync` is wrapped
to note how many bytes of the log each call made durable; an observer then checks, at the
moment it is told, that the record it was told about lies within them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.loop.conftest import LoopMaker
from tests.loop.test_service import recorder
from tests.support.fake_model import calls, text
from tui_agent.context import Prompt, ToolResultRecorded, parse_log
from tui_agent.loop import events as ev


class DurableBytes:
    """How much of the log file the last fsync made durable."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.size = 0
        real = os.fsync

        def fsync(fd: int) -> None:
            size = os.fstat(fd).st_size
            real(fd)
            self.size = max(self.size, size)

        monkeypatch.setattr(os, "fsync", fsync)

    def records(self, path: Path) -> list[object]:
        return list(parse_log(path.read_bytes()[: self.size]))


async def test_a_prompt_is_durable_before_the_turn_is_reported_started(
    make_loop: LoopMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    durable = DurableBytes(monkeypatch)
    service, _model, log_path = await make_loop([text("hello")])
    seen_on_disk: list[list[str]] = []

    def check(event: ev.LoopEvent) -> None:
        if isinstance(event, ev.TurnStarted):
            prompts = [r for r in durable.records(log_path) if isinstance(r, Prompt)]
            seen_on_disk.append([p.prompt_id for p in prompts])

    service.subscribe(check)
    handle = await service.submit("remember this")
    await handle.result()
    assert seen_on_disk == [[handle.id]]


async def test_a_tool_result_is_durable_before_tool_finished_is_published(
    make_loop: LoopMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    durable = DurableBytes(monkeypatch)
    step = calls(("read_file", {"path": "a.txt"}), ("glob", {"pattern": "*"}))
    service, _model, log_path = await make_loop([step, text("done")])
    on_disk_when_told: dict[str, bool] = {}

    def check(event: ev.LoopEvent) -> None:
        if isinstance(event, ev.ToolFinished):
            results = [r for r in durable.records(log_path) if isinstance(r, ToolResultRecorded)]
            on_disk_when_told[event.id] = any(r.call_id == event.id for r in results)

    service.subscribe(check)
    await (await service.submit("look")).result()
    assert on_disk_when_told == {"call_0": True, "call_1": True}


async def test_events_stay_in_order_and_a_handle_settles_after_its_turn_is_reported(
    make_loop: LoopMaker,
) -> None:
    service, _model, _ = await make_loop([calls(("read_file", {"path": "a.txt"})), text("done")])
    seen = recorder(service)
    handle = await service.submit("go")
    await handle.result()
    kinds = [e.type for e in seen if not isinstance(e, ev.MachineTransition)]
    assert kinds[0] == "turn.started" and kinds[-1] == "turn.finished"
    finished = kinds.index("tool.finished")
    assert "step.completed" in kinds[finished:]  # the next step's events follow the result
