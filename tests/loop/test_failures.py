"""Failures downstream of the loop are reported, never lost: a raising subscriber, a kernel bug."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.loop.conftest import LoopMaker
from tests.support.fake_model import text
from tui_agent.context import ErrorReported, Record, StepBegin, read_log
from tui_agent.loop import events as ev


def errors_in_log(path: Path) -> list[str]:
    return [r.text for r in read_log(path) if isinstance(r, ErrorReported)]


async def test_a_raising_subscriber_is_reported_and_the_others_see_every_event(
    make_loop: LoopMaker, caplog: pytest.LogCaptureFixture
) -> None:
    service, _model, log_path = await make_loop([text("Hello there.")])
    before: list[ev.LoopEvent] = []
    after: list[ev.LoopEvent] = []
    service.subscribe(before.append)

    def broken(event: ev.LoopEvent) -> None:
        if isinstance(event, ev.AssistantDelta):
            raise RuntimeError("widget bug")

    service.subscribe(broken)
    service.subscribe(after.append)
    with caplog.at_level(logging.ERROR):
        result = await (await service.submit("say hi")).result()
        await service.close()

    assert result.type == "completed"
    assert [e.type for e in before] == [e.type for e in after]  # nobody lost an event
    assert "".join(e.text for e in after if isinstance(e, ev.AssistantDelta)) == "Hello there."
    notices = [e for e in after if isinstance(e, ev.Notice) and e.level == "error"]
    assert len(notices) == 1  # once per subscriber and error, not once per delta
    assert "assistant.delta" in notices[0].text and "widget bug" in notices[0].text
    assert errors_in_log(log_path) == [notices[0].text]
    assert "widget bug" in caplog.text


async def test_an_error_the_kernel_catches_surfaces_as_a_notice_and_a_log_record(
    make_loop: LoopMaker,
) -> None:
    service, _model, log_path = await make_loop([text("Hello there.")])
    seen: list[ev.LoopEvent] = []
    service.subscribe(seen.append)
    journal = service._journal
    write = journal.write

    def failing_step_begin(record: Record) -> None:
        if isinstance(record, StepBegin):
            raise OSError("disk full")
        write(record)

    journal.write = failing_step_begin
    result = await (await service.submit("say hi")).result()
    await service.close()

    assert result.type == "completed"
    notices = [e for e in seen if isinstance(e, ev.Notice) and e.level == "error"]
    assert [n.text for n in notices] == ["internal error: OSError('disk full')"]
    assert errors_in_log(log_path) == ["internal error: OSError('disk full')"]
    # The kernel still keeps what it caught; empty it so the fixture's check passes.
    assert [repr(e) for e in service.engine.errors] == ["OSError('disk full')"]
    service.engine.errors.clear()
