"""The app's main states as scenes, shared by the snapshot tests and `make screenshots`.

Each scene runs its script through the real loop (`recorder.record`: real machines, scheduler
and tools on the scripted provider), stops at the moment worth looking at, and replays those
events into the app through the fake loop, with a fixed clock and fixed ids, so the picture
never varies between runs but changes, and its snapshot test fails, when the loop's behaviour
does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from tests.ui.fake_loop import INFO, FakeLoop
from tests.ui.recorder import T0, WAIT_FOR_GO, Play, Recording, record
from tui_agent.loop import events as ev
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.themes import LIGHT
from tui_agent.ui.widgets.blocks import RetryNotice
from tui_agent.vocab import ApprovalMode


class FixedClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


Show = Callable[[TuiAgentApp, Pilot[None], FixedClock], Awaitable[None]]


async def _nothing(app: TuiAgentApp, pilot: Pilot[None], clock: FixedClock) -> None:
    return None


@dataclass(frozen=True)
class Scene:
    size: tuple[int, int]
    steps: list[dict[str, Any]] = field(default_factory=list)
    play: Play | None = None  # drives the real loop; None: the scene starts empty
    approval_mode: ApprovalMode = "yolo"
    files: dict[str, str] = field(default_factory=dict)
    show: Show = _nothing  # keys pressed or time passed after the replay
    info: Any = INFO


def make_app(loop: FakeLoop | None = None) -> tuple[TuiAgentApp, FakeLoop, FixedClock]:
    loop = loop or FakeLoop()
    clock = FixedClock()
    app = TuiAgentApp(loop, clock=clock)
    # A steady cursor from the start: which phase of its blink a picture catches would depend
    # on the time, and Textual caches the prompt's line without the cursor in the "off" phase.
    app.prompt_input.cursor_blink = False
    return app, loop, clock


SETTLE_FRAMES = 100  # at most this many frames for the screen to stop changing


async def settle(app: TuiAgentApp, pilot: Pilot[None]) -> None:
    """Wait until the screen has stopped changing: every widget's messages handled, animations
    done and a frame painted, twice in a row with the same picture (layout and anchoring have
    caught up). It waits on those conditions, never for a fixed time."""
    for text_field in app.screen.query(Input):
        text_field.cursor_blink = False  # its cursor drawn and steady: no picture catches a blink
    await pilot.wait_for_scheduled_animations()
    frame = app.export_screenshot()
    for _ in range(SETTLE_FRAMES):
        await pilot.wait_for_scheduled_animations()
        previous, frame = frame, app.export_screenshot()
        if frame == previous:
            return
    raise AssertionError(f"the screen still changed after {SETTLE_FRAMES} frames")


async def play_scene(
    scene: Scene, app: TuiAgentApp, pilot: Pilot[None], loop: FakeLoop, clock: FixedClock
) -> None:
    """Record the scene from the real loop, replay it into the app, then show its moment."""
    events: list[ev.LoopEvent] = []
    if scene.play is not None:
        events = await record(
            scene.steps, scene.play, approval_mode=scene.approval_mode, files=scene.files
        )
    loop.emit(*events)
    await settle(app, pilot)
    await scene.show(app, pilot, clock)
    await settle(app, pilot)


def scene_app(scene: Scene) -> tuple[TuiAgentApp, FakeLoop, FixedClock]:
    return make_app(FakeLoop(info=scene.info))


# ---------------------------------------------------------------- scripts

QUESTION = "Why does test_reader fail? Fix it."
READER = "def parse(text):\n    return text.strip().split('\\n')\n"
FILES = {
    "src/reader.py": READER,
    "scripts/test.sh": f'echo "tests/test_reader.py ....F"\n{WAIT_FOR_GO}\n',
}
THINKING = "The user wants the parser fixed. Look at reader.py first."
ANSWER = (
    "The failing test expects `parse()` to keep blank lines. Two changes:\n\n"
    "1. stop stripping the input in `reader.py`\n"
    "2. add a regression test\n\n"
    '```python\ndef parse(text: str) -> list[str]:\n    return text.split("\\n")\n```\n\n'
    "I will now run the"
)
STREAMING = {"thinking": THINKING, "text": ANSWER + " tests.", "chunk_delay_s": 0}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


FIX_AND_TEST = {
    "thinking": THINKING,
    "text": ANSWER.replace("I will now run the", "Reading it, fixing it, then the tests."),
    "chunk_delay_s": 0,
    "tool_calls": [
        call("read_file", path="src/reader.py"),
        call(
            "edit_file",
            path="src/reader.py",
            old_string="text.strip().split",
            new_string="text.split",
        ),
        call("shell", command="sh scripts/test.sh"),
    ],
}


def is_(kind: type[ev.LoopEvent], **fields: Any) -> Callable[[ev.LoopEvent], bool]:
    def match(event: ev.LoopEvent) -> bool:
        return isinstance(event, kind) and all(getattr(event, k) == v for k, v in fields.items())

    return match


async def ask(recording: Recording, text: str = QUESTION) -> None:
    await recording.loop.submit(text)


async def until_output(recording: Recording) -> ev.LoopEvent:
    """The moment the edit is done and the test script has printed and waits (the edit and the
    script run side by side: wait for both, whichever order they come in)."""
    await ask(recording)
    edited = await recording.wait_for(is_(ev.ToolFinished, name="edit_file"))
    printed = await recording.wait_for(is_(ev.ToolUpdated))
    return max(edited, printed, key=recording.events.index)


# ---------------------------------------------------------------- scenes


async def streaming_play(recording: Recording) -> ev.LoopEvent:
    await ask(recording)
    streamed = ""

    def far_enough(event: ev.LoopEvent) -> bool:
        nonlocal streamed
        if isinstance(event, ev.AssistantDelta):
            streamed += event.text
        return len(streamed) >= len(ANSWER)

    return await recording.wait_for(far_enough)


async def tools_show(app: TuiAgentApp, pilot: Pilot[None], clock: FixedClock) -> None:
    clock.now += 7  # the test run has taken 7 s
    app.tools_pane.refresh_rows()


async def approval_play(recording: Recording) -> ev.LoopEvent:
    await ask(recording, "Clean the build folder and rebuild.")
    return await recording.wait_for(is_(ev.ApprovalRequested))


async def plan_play(recording: Recording) -> ev.LoopEvent:
    await ask(recording, "Plan how to make test_reader pass; change nothing yet.")
    return await recording.wait_for(is_(ev.ApprovalRequested))


BIG = "".join(f"def handler_{n}(event):\n    return route(event, {n})\n\n" for n in range(1, 16))
BIG_EDIT = {
    "text": "Renaming `route` to `dispatch` everywhere in handlers.py.",
    "chunk_delay_s": 0,
    "tool_calls": [
        call(
            "edit_file",
            path="handlers.py",
            old_string="return route(",
            new_string="return dispatch(",
            replace_all=True,
        )
    ],
}


async def scrolled_show(app: TuiAgentApp, pilot: Pilot[None], clock: FixedClock) -> None:
    clock.now += 1  # past the guard: the box answers keys
    await pilot.press("pagedown")


async def queue_play(recording: Recording) -> ev.LoopEvent:
    await until_output(recording)
    loop = recording.loop
    await loop.submit("Then update the changelog")
    await loop.submit("And bump the version to 1.4.1")
    await loop.submit("Only run the reader tests, not the whole suite", steer_if_active=True)
    await loop.remind("speed", "tests must stay under 10 s")
    return await recording.wait_for(is_(ev.NotificationQueued, source="reminder"))


async def queue_show(app: TuiAgentApp, pilot: Pilot[None], clock: FixedClock) -> None:
    await pilot.press("ctrl+n")


async def cancelled_play(recording: Recording) -> ev.LoopEvent:
    await until_output(recording)
    await recording.loop.cancel()
    return await recording.wait_for(is_(ev.TurnFinished))


async def retry_play(recording: Recording) -> ev.LoopEvent:
    await ask(recording, "Summarise the open issues.")
    return await recording.wait_for(is_(ev.Retrying))


async def retry_show(app: TuiAgentApp, pilot: Pilot[None], clock: FixedClock) -> None:
    clock.now += 3  # three seconds into an eight-second wait
    for notice in app.query(RetryNotice):  # now, not at its next half-second tick
        notice.refresh_block()


async def narrow_play(recording: Recording) -> ev.LoopEvent:
    await until_output(recording)
    await recording.loop.submit("Then update the changelog")
    return await recording.wait_for(is_(ev.PromptQueued))


async def inspector_show(app: TuiAgentApp, pilot: Pilot[None], clock: FixedClock) -> None:
    await pilot.press("f2")


async def light_show(app: TuiAgentApp, pilot: Pilot[None], clock: FixedClock) -> None:
    app.theme = LIGHT


RATE_LIMITED = {
    "text": "Looking at the",
    "chunk_delay_s": 0,
    "error": {
        "kind": "rate_limit",
        "message": "Too Many Requests",
        "status": 429,
        "retry_after_s": 8,
    },
}
PLAN = (
    "# Keep blank lines in `parse()`\n\n"
    "1. `src/reader.py`: split without stripping, so blank lines stay\n"
    "2. `tests/test_reader.py`: a regression test with two blank lines\n"
    "3. run `sh scripts/test.sh` and check it passes"
)
PLAN_STEP = {
    "text": "I have read the parser; here is the plan.",
    "chunk_delay_s": 0,
    "tool_calls": [call("exit_plan_mode", plan=PLAN)],
}
REAL_PROVIDER = replace(INFO, provider="openai", model="gpt-4.1", demo=False)

SCENES: dict[str, Scene] = {
    "empty_demo": Scene((100, 30)),
    "welcome": Scene((100, 30), info=REAL_PROVIDER),
    "streaming": Scene((100, 30), [STREAMING], streaming_play),
    "tools_running": Scene((120, 36), [FIX_AND_TEST], until_output, files=FILES, show=tools_show),
    "approval": Scene(
        (100, 30),
        [
            {
                "text": "I'll remove the old build first.",
                "chunk_delay_s": 0,
                "tool_calls": [call("shell", command="rm -rf build")],
            }
        ],
        approval_play,
        approval_mode="ask",
    ),
    "approval_scrolled": Scene(
        (60, 20),
        [BIG_EDIT],
        approval_play,
        approval_mode="ask",
        files={"handlers.py": BIG},
        show=scrolled_show,
    ),
    "plan_approval": Scene(
        (100, 30),
        [PLAN_STEP],
        plan_play,
        approval_mode="plan",
        files=FILES,
        info=replace(INFO, approval_mode="plan"),
    ),
    "queue_and_steer": Scene((120, 36), [FIX_AND_TEST], queue_play, files=FILES, show=queue_show),
    "cancelled": Scene((100, 30), [FIX_AND_TEST], cancelled_play, files=FILES),
    "retry_countdown": Scene((100, 30), [RATE_LIMITED], retry_play, show=retry_show),
    "narrow": Scene((60, 20), [FIX_AND_TEST], narrow_play, files=FILES),
    "inspector": Scene((100, 30), [FIX_AND_TEST], until_output, files=FILES, show=inspector_show),
    "light_theme": Scene((120, 36), [FIX_AND_TEST], until_output, files=FILES, show=light_show),
}
