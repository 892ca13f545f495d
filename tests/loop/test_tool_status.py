"""One call, one status: every view reads a call's end the same way (`vocab.tool_status`).

A real turn makes four calls that end four ways (done, an error result, denied by the user,
stopped while it ran); the live events (what headless jsonl prints), the app's view model, the
replay a resumed session draws, the Markdown export and ACP must all agree on each.
"""

from __future__ import annotations

import json
import re
from typing import ClassVar

from tests.loop.conftest import LoopMaker
from tests.loop.test_service import of_type, recorder, until
from tests.support.fake_model import calls, text
from tests.ui.fake_loop import INFO
from tui_agent.acp._translate import Translator
from tui_agent.context import read_log
from tui_agent.loop import events as ev
from tui_agent.loop.replay import replay
from tui_agent.session import export_session
from tui_agent.tools import Tool, ToolAborted, ToolArgs, ToolContext
from tui_agent.ui.view_model import ToolBlock, ViewModel
from tui_agent.vocab import ToolResult, tool_status

EXPECTED = {"call_0": "done", "call_1": "failed", "call_2": "denied", "call_3": "aborted"}


class WaitArgs(ToolArgs):
    pass


class Wait(Tool[WaitArgs]):
    """Read-only (runs without asking), runs until its call is stopped."""

    name: ClassVar[str] = "wait"
    description: ClassVar[str] = "Waits until stopped."
    Args = WaitArgs
    read_only: ClassVar[bool] = True

    async def execute(self, args: WaitArgs, ctx: ToolContext) -> ToolResult:
        await ctx.signal.wait()
        raise ToolAborted(partial="half")


async def test_every_view_gives_each_call_the_same_final_status(make_loop: LoopMaker) -> None:
    step = calls(
        ("read_file", {"path": "a.txt"}),
        ("read_file", {"path": "missing.txt"}),
        ("edit_file", {"path": "a.txt", "old_string": "alpha", "new_string": "beta"}),
        ("wait", {}),
    )
    service, _model, log_path = await make_loop(
        [step, text("ok")], approval_mode="ask", tools=(Wait(),)
    )
    seen = recorder(service)
    handle = await service.submit("go")
    await until(lambda: of_type(seen, ev.ApprovalRequested))
    await service.answer_approval(of_type(seen, ev.ApprovalRequested)[0].request_id, "deny")
    await until(lambda: any(e.id == "call_3" and e.state == "running" for e in _states(seen)))
    assert await service.cancel_tool("call_3")
    assert (await handle.result()).type == "completed"
    await service.settled()
    await service.close()

    live = {e.id: e.status for e in of_type(seen, ev.ToolFinished)}
    assert live == EXPECTED
    # headless jsonl prints the events as they are: `status` is there, next to the old fields
    printed = [json.loads(e.model_dump_json()) for e in of_type(seen, ev.ToolFinished)]
    assert {p["id"]: p["status"] for p in printed} == EXPECTED
    final_states = {e.id: e.state for e in _states(seen)}  # the last state each call reached
    assert final_states == EXPECTED

    vm = ViewModel(INFO, clock=lambda: 0.0)
    for event in seen:
        vm.apply(event)
    blocks = {b.call_id: b.state for b in vm.blocks if isinstance(b, ToolBlock)}
    assert blocks == EXPECTED

    records = read_log(log_path)
    resumed = {e.id: e.status for e in replay(records, context_window=0).events if _finished(e)}
    assert resumed == EXPECTED

    words = {"done": "done", "failed": "failed", "denied": "denied", "aborted": "stopped"}
    markdown = export_session(records, "md")
    heads = re.findall(r"\*\*. `(\w+)`\*\* \((\w+)\)", markdown)
    assert [word for _name, word in heads] == [words[s] for s in EXPECTED.values()]
    exported = [json.loads(line) for line in export_session(records, "jsonl").splitlines()]
    statuses = {e["id"]: e["status"] for e in exported if e["type"] == "tool.finished"}
    assert statuses == EXPECTED

    translator = Translator(str(log_path.parent))
    acp = {u.tool_call_id: u.status for e in seen for u in translator.event(e) if _ended(u)}
    assert acp == {
        call_id: "completed" if status == "done" else "failed"
        for call_id, status in EXPECTED.items()
    }


def test_the_status_rule_reads_marks_before_errors() -> None:
    assert tool_status(is_error=False) == "done"
    assert tool_status(is_error=True) == "failed"
    assert tool_status(is_error=False, outcome="failed") == "failed"
    assert tool_status(is_error=True, display={"outcome": "denied"}) == "denied"
    assert tool_status(is_error=True, display={"outcome": "aborted"}) == "aborted"
    assert tool_status(is_error=True, outcome="aborted") == "aborted"


def _states(seen: list[ev.LoopEvent]) -> list[ev.ToolStateChanged]:
    return of_type(seen, ev.ToolStateChanged)


def _finished(event: ev.LoopEvent) -> bool:
    return isinstance(event, ev.ToolFinished)


def _ended(update: object) -> bool:
    return getattr(update, "status", None) in ("completed", "failed")
