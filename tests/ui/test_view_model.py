"""The view model alone: loop events in, transcript blocks, pane rows and status out."""

from __future__ import annotations

from tests.ui.fake_loop import INFO
from tui_agent.loop import events as ev
from tui_agent.loop.snapshot import LoopSnapshot, PendingNotification, QueuedPrompt
from tui_agent.ui.view_model import (
    BlockRemoved,
    Change,
    MarkerBlock,
    RetryBlock,
    StreamEnded,
    TextAppended,
    TextBlock,
    ThinkingBlock,
    ToolBlock,
    UserBlock,
    ViewModel,
)
from tui_agent.vocab import TokenUsage


def make_vm() -> tuple[ViewModel, list[Change]]:
    vm = ViewModel(INFO, clock=lambda: 100.0)
    changes: list[Change] = []
    vm.listen(changes.append)
    return vm, changes


def start_turn(vm: ViewModel, text: str = "hello") -> None:
    vm.apply(ev.TurnStarted(turn_id=1, prompt_ids=("p1",), texts=(text,)))
    vm.apply(ev.StepStarted(turn_id=1, step=1))


def test_turn_start_shows_the_prompt_and_step_in_the_status() -> None:
    vm, _ = make_vm()
    start_turn(vm, "fix it")
    assert isinstance(vm.blocks[0], UserBlock) and vm.blocks[0].text == "fix it"
    assert vm.agent_label() == "step 1"


def test_deltas_stream_into_one_text_block_that_ends_with_the_step() -> None:
    vm, changes = make_vm()
    start_turn(vm)
    vm.apply(ev.AssistantDelta(turn_id=1, step=1, text="Hel"))
    vm.apply(ev.AssistantDelta(turn_id=1, step=1, text="lo"))
    vm.apply(
        ev.StepCompleted(
            turn_id=1, step=1, text="Hello", thinking="", finish_reason="end_turn", usage=None
        )
    )
    texts = [b for b in vm.blocks if isinstance(b, TextBlock)]
    assert [b.text for b in texts] == ["Hello"]
    assert not texts[0].streaming
    assert [c.delta for c in changes if isinstance(c, TextAppended)] == ["Hel", "lo"]
    assert any(isinstance(c, StreamEnded) for c in changes)


def test_thinking_gets_its_own_block_before_the_text() -> None:
    vm, _ = make_vm()
    start_turn(vm)
    vm.apply(ev.ThinkingDelta(turn_id=1, step=1, text="hmm"))
    vm.apply(ev.AssistantDelta(turn_id=1, step=1, text="answer"))
    kinds = [type(b) for b in vm.blocks[1:]]
    assert kinds == [ThinkingBlock, TextBlock]
    assert not vm.blocks[1].streaming  # type: ignore[union-attr]


def test_text_from_a_provider_that_does_not_stream_appears_at_step_end() -> None:
    vm, _ = make_vm()
    start_turn(vm)
    vm.apply(
        ev.StepCompleted(
            turn_id=1, step=1, text="whole", thinking="", finish_reason=None, usage=None
        )
    )
    assert [b.text for b in vm.blocks if isinstance(b, TextBlock)] == ["whole"]


def test_a_discarded_attempt_removes_its_partial_text() -> None:
    vm, changes = make_vm()
    start_turn(vm)
    vm.apply(ev.AssistantDelta(turn_id=1, step=1, text="partial"))
    vm.apply(ev.AttemptDiscarded(turn_id=1, step=1))
    assert not any(isinstance(b, TextBlock) for b in vm.blocks)
    assert any(isinstance(c, BlockRemoved) for c in changes)


def test_retry_shows_reason_and_deadline_then_resolves_on_the_next_delta() -> None:
    vm, _ = make_vm()
    start_turn(vm)
    vm.apply(
        ev.Retrying(
            turn_id=1,
            step=1,
            attempt=2,
            max_attempts=5,
            delay_s=3.0,
            error_code="llm.rate_limited",
            message="slow down",
            ts=100.0,
        )
    )
    retry = next(b for b in vm.blocks if isinstance(b, RetryBlock))
    assert (retry.deadline, retry.error_code, retry.resolved) == (103.0, "llm.rate_limited", False)
    assert vm.agent_label() == "retrying"
    vm.apply(ev.AssistantDelta(turn_id=1, step=1, text="ok"))
    assert retry.resolved


def test_repeated_retries_of_a_step_fold_into_one_line_with_the_http_status() -> None:
    vm, _ = make_vm()
    start_turn(vm)
    for attempt in (2, 3, 4):
        vm.apply(
            ev.Retrying(
                turn_id=1,
                step=1,
                attempt=attempt,
                max_attempts=5,
                delay_s=2.0,
                error_code="llm.status",
                message="Internal Server Error\n<html>a long page</html>",
                status=500,
                ts=100.0 + attempt,
            )
        )
    retries = [b for b in vm.blocks if isinstance(b, RetryBlock)]
    assert len(retries) == 1
    retry = retries[0]
    assert (retry.attempt, retry.failures, retry.deadline) == (4, 3, 106.0)
    assert retry.reason == "HTTP 500 · Internal Server Error"
    vm.apply(ev.AssistantDelta(turn_id=1, step=1, text="ok"))
    assert retry.resolved


def test_tool_call_is_one_block_updated_in_place_and_a_live_row_until_it_finishes() -> None:
    vm, _ = make_vm()
    start_turn(vm)
    vm.apply(ev.ToolStarted(id="c1", name="shell", arguments='{"command": "ls -la"}'))
    vm.apply(ev.ToolStateChanged(id="c1", name="shell", state="running"))
    vm.apply(ev.ToolUpdated(id="c1", text="a\nb\n"))
    block = next(b for b in vm.blocks if isinstance(b, ToolBlock))
    assert (block.state, block.summary, vm.tools["c1"].tail) == ("running", "ls -la", "b")
    vm.apply(ev.ToolFinished(id="c1", name="shell", outcome="aborted", output="a", is_error=True))
    assert block.state == "aborted"
    assert "c1" not in vm.tools
    assert sum(isinstance(b, ToolBlock) for b in vm.blocks) == 1


def test_edit_display_diff_is_kept_on_the_block() -> None:
    vm, _ = make_vm()
    vm.apply(ev.ToolStarted(id="c1", name="edit_file", arguments='{"path": "a.py"}'))
    vm.apply(
        ev.ToolFinished(
            id="c1",
            name="edit_file",
            outcome="succeeded",
            output="ok",
            is_error=False,
            display={"diff": "-a\n+b\n"},
        )
    )
    block = next(b for b in vm.blocks if isinstance(b, ToolBlock))
    assert block.diff == "-a\n+b\n"


def test_queue_keeps_pending_steers_and_notes_ahead_of_queued_prompts() -> None:
    vm, _ = make_vm()
    vm.apply(ev.PromptQueued(prompt_id="p2", text="later"))
    vm.apply(ev.NotificationQueued(source="notify", text="build finished"))
    vm.apply(ev.PromptSteered(prompt_ids=("p3",), text="use -x"))
    assert [(r.kind, r.text) for r in vm.queue] == [
        ("notification", "build finished"),
        ("steer", "use -x"),
        ("prompt", "later"),
    ]


def test_drained_items_leave_the_queue_and_enter_the_transcript_marked_as_steers() -> None:
    vm, _ = make_vm()
    start_turn(vm)
    vm.apply(ev.PromptSteered(prompt_ids=("p3",), text="use -x"))
    vm.apply(ev.Drained(turn_id=1, texts=("use -x",), prompt_ids=("p3",)))
    assert vm.queue == []
    assert isinstance(vm.blocks[-1], UserBlock) and vm.blocks[-1].via == "steer"


def test_steers_leave_the_queue_by_prompt_id_never_by_text() -> None:
    vm, _ = make_vm()
    start_turn(vm)
    vm.apply(ev.PromptSteered(prompt_ids=("p3",), text="same words"))
    vm.apply(ev.PromptSteered(prompt_ids=("p4",), text="same words"))
    # Two steers merged into one history entry: its text is neither steer's text.
    vm.apply(ev.Drained(turn_id=1, texts=("same words\n\nsame words",), prompt_ids=("p3",)))
    assert [r.steer_ids for r in vm.queue] == [("p4",)]
    vm.apply(ev.Drained(turn_id=1, texts=("same words",), prompt_ids=("p4",)))
    assert vm.queue == []


def test_an_edited_prompt_keeps_its_place_in_the_queue() -> None:
    vm, _ = make_vm()
    vm.apply(ev.PromptQueued(prompt_id="p2", text="one"))
    vm.apply(ev.PromptQueued(prompt_id="p3", text="two"))
    vm.apply(ev.PromptRemoved(prompt_id="p2", reason="edited"))
    vm.apply(ev.PromptQueued(prompt_id="p2", text="uno"))
    assert [r.text for r in vm.queue] == ["uno", "two"]


def test_reminders_with_the_same_key_replace_each_other() -> None:
    vm, _ = make_vm()
    vm.apply(ev.NotificationQueued(source="reminder", text="old", key="tests"))
    vm.apply(ev.NotificationQueued(source="reminder", text="new", key="tests"))
    assert [(r.kind, r.text) for r in vm.queue] == [("reminder", "new")]


def test_cancelled_turn_is_marked_interrupted_and_status_returns_to_idle() -> None:
    vm, _ = make_vm()
    start_turn(vm)
    vm.apply(ev.TurnAborting(turn_id=1, reason="user_cancelled"))
    assert vm.agent_label() == "cancelling"
    vm.apply(
        ev.TurnFinished(
            turn_id=1,
            text="",
            result=ev.TurnResult(type="cancelled", steps=1, reason="user_cancelled"),
        )
    )
    marker = vm.blocks[-1]
    assert isinstance(marker, MarkerBlock) and marker.kind == "interrupted"
    assert vm.agent_label() == "idle"


def test_approval_requests_wait_in_order_and_leave_when_resolved() -> None:
    vm, _ = make_vm()
    for n in (1, 2):
        vm.apply(
            ev.ApprovalRequested(
                request_id=f"r{n}", call_id=f"c{n}", name="shell", summary="rm", rule="shell: rm"
            )
        )
    assert vm.agent_label() == "awaiting approval"
    vm.apply(ev.ApprovalResolved(request_id="r1", call_id="c1", decision="once"))
    assert [a.request_id for a in vm.approvals] == ["r2"]


def test_usage_sets_tokens_and_context_percent() -> None:
    vm, _ = make_vm()
    vm.apply(
        ev.UsageChanged(
            total=TokenUsage(input_other=900, output=100),
            context_tokens=50_000,
            context_window=200_000,
        )
    )
    assert (vm.status.tokens_in, vm.status.tokens_out, vm.status.context_percent) == (900, 100, 25)


def test_machine_transitions_feed_the_inspector_table() -> None:
    vm, _ = make_vm()
    vm.apply(
        ev.MachineTransition(
            machine="turn",
            machine_id="turn:1",
            event="llm_done",
            source="requesting",
            target="running",
        )
    )
    assert vm.machines.states == {"turn:1": "running"}
    assert len(vm.machines.transitions) == 1


def test_reset_replays_the_transcript_and_takes_panes_from_the_snapshot() -> None:
    vm, changes = make_vm()
    transcript: list[ev.LoopEvent] = [
        ev.TurnStarted(turn_id=1, prompt_ids=(), texts=("q",)),
        ev.StepStarted(turn_id=1, step=1),
        ev.StepCompleted(turn_id=1, step=1, text="a", thinking="", finish_reason=None, usage=None),
        ev.ToolStarted(id="c1", name="read_file", arguments='{"path": "x"}'),
        ev.ToolFinished(
            id="c1", name="read_file", outcome="succeeded", output="data", is_error=False
        ),
    ]
    snapshot = LoopSnapshot(
        "idle",
        None,
        None,
        0,
        paused=False,
        queue=(QueuedPrompt("p9", "next"),),
        notifications=(PendingNotification("notify", "ping"),),
    )
    vm.reset(INFO, transcript, snapshot)
    assert [type(b) for b in vm.blocks] == [UserBlock, TextBlock, ToolBlock]
    assert [type(c).__name__ for c in changes] == ["Reset"]
    assert vm.status.activity == "idle" and not vm.tools
    tool = vm.blocks[2]
    assert isinstance(tool, ToolBlock) and (tool.output, tool.state) == ("data", "done")
    assert [(r.kind, r.prompt_id) for r in vm.queue] == [("notification", None), ("prompt", "p9")]
    assert vm.history == ["q"]
