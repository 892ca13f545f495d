"""Plan mode through the public loop API: edits refused with a result that says why, the plan
presented with `exit_plan_mode`, accepted into the chosen mode (or kept planning), and the
permission rules listed and removed through the service."""

from __future__ import annotations

from pathlib import Path

from tests.loop.conftest import LoopMaker
from tests.loop.test_service import of_type, recorder, until
from tests.support.fake_model import calls, text
from tui_agent.loop import events as ev
from tui_agent.tools import PLAN_MODE_PROMPT, PLAN_REFUSAL

PLAN = "# Plan\n1. Change alpha to beta in a.txt"


async def test_plan_mode_refuses_the_edit_and_the_accepted_plan_switches_the_mode(
    make_loop: LoopMaker, workspace: Path
) -> None:
    edit = calls(("edit_file", {"path": "a.txt", "old_string": "alpha", "new_string": "beta"}))
    present = calls(("exit_plan_mode", {"plan": PLAN}), prefix="p")
    again = calls(
        ("edit_file", {"path": "a.txt", "old_string": "alpha", "new_string": "beta"}), prefix="e"
    )
    service, model, _ = await make_loop([edit, present, again, text("done")], approval_mode="plan")
    seen = recorder(service)
    handle = await service.submit("change alpha")
    await until(lambda: of_type(seen, ev.ApprovalRequested))
    request = of_type(seen, ev.ApprovalRequested)[0]
    assert request.kind == "plan" and request.preview == PLAN
    assert [e.plan for e in of_type(seen, ev.PlanProposed)] == [PLAN]
    assert (workspace / "a.txt").read_text() == "alpha\n"  # plan mode changed nothing
    await service.answer_approval(request.request_id, "once", mode="auto-edit")
    assert (await handle.result()).type == "completed"
    refused = next(m.text for m in model.requests[1].messages if m.role == "tool")
    assert refused.endswith(PLAN_REFUSAL.format(name="edit_file"))
    accepted = [m.text for m in model.requests[2].messages if m.role == "tool"][-1]
    assert "accepted" in accepted and "auto-edit" in accepted
    assert service.info.approval_mode == "auto-edit"
    assert [e.mode for e in of_type(seen, ev.ModeChanged)] == ["auto-edit"]
    assert (workspace / "a.txt").read_text() == "beta\n"  # auto-edit: ran without asking
    # The model knew it was planning from its first request, and no longer once accepted.
    assert [PLAN_MODE_PROMPT in r.system for r in model.requests] == [True, True, False, False]


async def test_keep_planning_passes_the_feedback_and_stays_in_plan_mode(
    make_loop: LoopMaker,
) -> None:
    present = calls(("exit_plan_mode", {"plan": PLAN}))
    service, model, _ = await make_loop([present, text("revising")], approval_mode="plan")
    seen = recorder(service)
    handle = await service.submit("plan it")
    await until(lambda: of_type(seen, ev.ApprovalRequested))
    request = of_type(seen, ev.ApprovalRequested)[0]
    await service.answer_approval(request.request_id, "deny", "do it in two commits")
    await handle.result()
    result = next(m.text for m in model.requests[1].messages if m.role == "tool")
    assert "keep planning" in result and "do it in two commits" in result
    assert service.info.approval_mode == "plan"


async def test_set_approval_mode_publishes_the_change(make_loop: LoopMaker) -> None:
    service, _model, _ = await make_loop([], approval_mode="ask")
    seen = recorder(service)
    service.set_approval_mode("plan")
    assert [e.mode for e in of_type(seen, ev.ModeChanged)] == ["plan"]
    assert service.info.approval_mode == "plan"
