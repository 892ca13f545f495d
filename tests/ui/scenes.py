"""The app's main states as replayable scenes, shared by the snapshot tests and `make screenshots`.

Each scene replays, through the fake loop, the events the loop publishes for a scripted-provider
run (the same order and shapes), up to the moment worth looking at, with a fixed clock and fixed
ids so the picture never varies.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from textual.pilot import Pilot

from tests.ui.fake_loop import FakeLoop
from tui_agent.loop import events as ev
from tui_agent.ui.app import TuiAgentApp
from tui_agent.vocab import TokenUsage

T0 = 1_764_450_000.0  # fixed "now" for every scene


class FixedClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True)
class Scene:
    size: tuple[int, int]
    play: Callable[[TuiAgentApp, Pilot[None], FakeLoop, FixedClock], Awaitable[None]]


def make_app(loop: FakeLoop | None = None) -> tuple[TuiAgentApp, FakeLoop, FixedClock]:
    loop = loop or FakeLoop()
    clock = FixedClock()
    return TuiAgentApp(loop, clock=clock), loop, clock


async def settle(app: TuiAgentApp, pilot: Pilot[None]) -> None:
    app.prompt_input.cursor_blink = False
    for _ in range(3):
        await pilot.pause(0.05)


def _turn(loop: FakeLoop, text: str) -> None:
    loop.emit(
        ev.TurnStarted(turn_id=1, prompt_ids=("p1",), texts=(text,), ts=T0),
        ev.StepStarted(turn_id=1, step=1, ts=T0),
    )


def _usage(loop: FakeLoop, tokens_in: int, tokens_out: int) -> None:
    loop.emit(
        ev.UsageChanged(
            total=TokenUsage(input_other=tokens_in, output=tokens_out),
            context_tokens=tokens_in + tokens_out,
            context_window=200_000,
            ts=T0,
        )
    )


ANSWER = (
    "The failing test expects `parse()` to keep blank lines. Two changes:\n\n"
    "1. stop stripping the input in `reader.py`\n"
    "2. add a regression test\n\n"
    '```python\ndef parse(text: str) -> list[str]:\n    return text.split("\\n")\n```\n\n'
    "I will now run the"
)


def _stream_answer(loop: FakeLoop) -> None:
    loop.emit(ev.ThinkingDelta(turn_id=1, step=1, text="The user wants the parser fixed. ", ts=T0))
    loop.emit(ev.ThinkingDelta(turn_id=1, step=1, text="Look at reader.py first.", ts=T0))
    for start in range(0, len(ANSWER), 12):
        loop.emit(ev.AssistantDelta(turn_id=1, step=1, text=ANSWER[start : start + 12], ts=T0))


def _tools(loop: FakeLoop) -> None:
    loop.emit(
        ev.StepCompleted(
            turn_id=1, step=1, text="", thinking="", finish_reason="tool_use", usage=None, ts=T0
        ),
        ev.ToolStarted(id="call_1", name="read_file", arguments='{"path": "src/reader.py"}', ts=T0),
        ev.ToolStarted(id="call_2", name="edit_file", arguments='{"path": "src/reader.py"}', ts=T0),
        ev.ToolStarted(
            id="call_3", name="shell", arguments='{"command": "pytest -q tests"}', ts=T0
        ),
        ev.ToolStateChanged(id="call_1", name="read_file", state="running", ts=T0),
        ev.ToolFinished(
            id="call_1",
            name="read_file",
            outcome="succeeded",
            output="def parse(text):\n    return text.strip().split('\\n')\n",
            is_error=False,
            ts=T0,
        ),
        ev.ToolStateChanged(id="call_2", name="edit_file", state="running", ts=T0),
        ev.ToolFinished(
            id="call_2",
            name="edit_file",
            outcome="succeeded",
            output="Edited src/reader.py",
            is_error=False,
            display={
                "diff": "--- a/src/reader.py\n+++ b/src/reader.py\n@@ -1,2 +1,2 @@\n"
                " def parse(text):\n-    return text.strip().split('\\n')\n"
                "+    return text.split('\\n')\n"
            },
            ts=T0,
        ),
        ev.ToolStateChanged(id="call_3", name="shell", state="running", ts=T0),
        ev.ToolUpdated(id="call_3", text="tests/test_reader.py ....\n", ts=T0),
    )


async def empty_demo(
    app: TuiAgentApp, pilot: Pilot[None], loop: FakeLoop, clock: FixedClock
) -> None:
    await settle(app, pilot)


async def streaming(
    app: TuiAgentApp, pilot: Pilot[None], loop: FakeLoop, clock: FixedClock
) -> None:
    _turn(loop, "Why does test_reader fail? Fix it.")
    _usage(loop, 3_200, 140)
    _stream_answer(loop)
    await settle(app, pilot)


async def tools_running(
    app: TuiAgentApp, pilot: Pilot[None], loop: FakeLoop, clock: FixedClock
) -> None:
    _turn(loop, "Why does test_reader fail? Fix it.")
    _stream_answer(loop)
    _tools(loop)
    loop.emit(
        ev.ToolStarted(id="call_4", name="shell", arguments='{"command": "ruff check src"}', ts=T0),
        ev.ToolStateChanged(id="call_4", name="shell", state="queued", ts=T0),
    )
    _usage(loop, 9_800, 610)
    clock.now += 7
    await settle(app, pilot)
    app.tools_pane.refresh_rows()
    await settle(app, pilot)


async def approval(app: TuiAgentApp, pilot: Pilot[None], loop: FakeLoop, clock: FixedClock) -> None:
    _turn(loop, "Clean the build folder and rebuild.")
    loop.emit(
        ev.StepCompleted(
            turn_id=1,
            step=1,
            text="I'll remove the old build first.",
            thinking="",
            finish_reason="tool_use",
            usage=None,
            ts=T0,
        ),
        ev.ToolStarted(id="call_1", name="shell", arguments='{"command": "rm -rf build"}', ts=T0),
        ev.ToolStateChanged(id="call_1", name="shell", state="awaiting_approval", ts=T0),
        ev.ApprovalRequested(
            request_id="r1",
            call_id="call_1",
            name="shell",
            summary="rm -rf build",
            rule="shell: rm",
            preview="rm -rf build",
            ts=T0,
        ),
    )
    await settle(app, pilot)


async def queue_and_steer(
    app: TuiAgentApp, pilot: Pilot[None], loop: FakeLoop, clock: FixedClock
) -> None:
    _turn(loop, "Why does test_reader fail? Fix it.")
    _stream_answer(loop)
    _tools(loop)
    loop.emit(
        ev.PromptQueued(prompt_id="p2", text="Then update the changelog", ts=T0),
        ev.PromptQueued(prompt_id="p3", text="And bump the version to 1.4.1", ts=T0),
        ev.PromptSteered(
            prompt_ids=("p4",), text="Only run the reader tests, not the whole suite", ts=T0
        ),
        ev.NotificationQueued(
            source="reminder", text="tests must stay under 10 s", key="speed", ts=T0
        ),
    )
    await settle(app, pilot)
    await pilot.press("ctrl+n")
    await settle(app, pilot)


async def cancelled(
    app: TuiAgentApp, pilot: Pilot[None], loop: FakeLoop, clock: FixedClock
) -> None:
    _turn(loop, "Why does test_reader fail? Fix it.")
    _stream_answer(loop)
    _tools(loop)
    loop.emit(
        ev.TurnAborting(turn_id=1, reason="user_cancelled", ts=T0),
        ev.ToolStateChanged(id="call_3", name="shell", state="aborted", ts=T0),
        ev.ToolFinished(
            id="call_3",
            name="shell",
            outcome="aborted",
            output="tests/test_reader.py ....\n[stopped by the user]",
            is_error=True,
            ts=T0,
        ),
        ev.TurnFinished(
            turn_id=1,
            text="",
            result=ev.TurnResult(type="cancelled", steps=1, reason="user_cancelled"),
            ts=T0,
        ),
    )
    await settle(app, pilot)


async def retry_countdown(
    app: TuiAgentApp, pilot: Pilot[None], loop: FakeLoop, clock: FixedClock
) -> None:
    _turn(loop, "Summarise the open issues.")
    loop.emit(
        ev.AssistantDelta(turn_id=1, step=1, text="Looking at the", ts=T0),
        ev.AttemptDiscarded(turn_id=1, step=1, ts=T0),
        ev.Retrying(
            turn_id=1,
            step=1,
            attempt=2,
            max_attempts=5,
            delay_s=8.0,
            error_code="llm.rate_limited",
            message="429 Too Many Requests",
            ts=T0,
        ),
    )
    clock.now += 3
    await settle(app, pilot)


async def narrow(app: TuiAgentApp, pilot: Pilot[None], loop: FakeLoop, clock: FixedClock) -> None:
    _turn(loop, "Why does test_reader fail? Fix it.")
    _stream_answer(loop)
    _tools(loop)
    loop.emit(ev.PromptQueued(prompt_id="p2", text="Then update the changelog", ts=T0))
    await settle(app, pilot)


async def inspector(
    app: TuiAgentApp, pilot: Pilot[None], loop: FakeLoop, clock: FixedClock
) -> None:
    _turn(loop, "Why does test_reader fail? Fix it.")
    steps = [
        ("agent", "agent", "submit", "idle", "running"),
        ("turn", "turn:1", "start", "idle", "gating"),
        ("turn", "turn:1", "gate_open", "gating", "requesting"),
        ("turn", "turn:1", "llm_done", "requesting", "running"),
        ("tool", "tool:call_3", "start", "queued", "running"),
    ]
    for machine, machine_id, event, source, target in steps:
        loop.emit(
            ev.MachineTransition(
                machine=machine,
                machine_id=machine_id,
                event=event,
                source=source,
                target=target,
                ts=T0,
            )
        )
    await pilot.press("f2")
    await settle(app, pilot)


SCENES: dict[str, Scene] = {
    "empty_demo": Scene((100, 30), empty_demo),
    "streaming": Scene((100, 30), streaming),
    "tools_running": Scene((120, 36), tools_running),
    "approval": Scene((100, 30), approval),
    "queue_and_steer": Scene((120, 36), queue_and_steer),
    "cancelled": Scene((100, 30), cancelled),
    "retry_countdown": Scene((100, 30), retry_countdown),
    "narrow": Scene((60, 20), narrow),
    "inspector": Scene((100, 30), inspector),
}
