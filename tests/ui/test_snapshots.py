"""SVG snapshots of the main states, recorded from the real loop (fixed size, theme, clock and
ids; see scenes.py): a change in what the loop emits for a scene's script fails its snapshot.

Review every change by eye (`pytest --snapshot-update`, then open the report or render the SVG).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.ui.fake_loop import INFO, FakeLoop
from tests.ui.real_loop import until
from tests.ui.scenes import SCENES, make_app, play_scene, scene_app, settle
from tests.ui.test_delivery import answer_text, long_answer, transcript_rows, turn
from tui_agent.loop import events as ev
from tui_agent.loop.costs import Budget, CostLedger, CostLine, CostReport, Metering
from tui_agent.session import Attachment, attach
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.view_model import MarkerBlock
from tui_agent.usage import PriceOverride, Pricer
from tui_agent.vocab import (
    LLMRequest,
    Message,
    TextPart,
    TokenUsage,
    ToolCall,
    ToolResult,
    ToolSpec,
    user_message,
)


@pytest.mark.parametrize("name", sorted(SCENES))
def test_scene_looks_as_reviewed(name: str, snap_compare: Any) -> None:
    scene = SCENES[name]
    app, loop, clock = scene_app(scene)

    async def run_before(pilot: Pilot[None]) -> None:
        await play_scene(scene, app, pilot, loop, clock)

    assert snap_compare(app, terminal_size=scene.size, run_before=run_before)


def test_a_long_answer_finished_looks_as_it_did_streaming(snap_compare: Any) -> None:
    # The snapshot is the finished answer at its end (tables, lists, fences); before it is
    # taken, the transcript must be cell for cell what it was while the answer streamed.
    text = long_answer()
    app, loop, _clock = make_app()

    async def run_before(pilot: Pilot[None]) -> None:
        turn(loop)
        for start in range(0, len(text), 7):
            loop.emit(ev.AssistantDelta(turn_id=1, step=1, text=text[start : start + 7]))
        await until(pilot, lambda: answer_text(app) == text)
        await settle(app, pilot)
        streaming = transcript_rows(app)
        loop.emit(
            ev.StepCompleted(
                turn_id=1, step=1, text=text, thinking="", finish_reason="stop", usage=None
            ),
            ev.TurnFinished(turn_id=1, text=text, result=ev.TurnResult(type="completed", steps=1)),
        )
        await until(pilot, lambda: not app.vm.busy)
        await settle(app, pilot)
        assert transcript_rows(app) == streaming

    assert snap_compare(app, terminal_size=(100, 40), run_before=run_before)


def markers(app: TuiAgentApp) -> list[str]:
    return [block.text for block in app.vm.blocks if isinstance(block, MarkerBlock)]


def priced_report() -> CostReport:
    """A session on a model priced $3/M input, $0.30/M cache reads, $3.75/M cache writes and
    $15/M output (config.toml's prices, so the figures never move with the table)."""
    override = PriceOverride(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    pricer = Pricer("claude-sonnet-4-5", provider="anthropic", override=override)
    ledger = CostLedger(Metering(pricer, Budget(max_session_usd=5.0)), CostLine("session"))
    ledger.begin_turn(1)
    ledger.step(TokenUsage(input_other=12_000, input_cache_creation=8_000, output=900))
    ledger.begin_turn(2)
    ledger.step(TokenUsage(input_other=400, input_cache_read=20_000, output=300))
    ledger.tool_result("c1", "read_file", ToolResult(output="x" * 24_000))
    ledger.subagent("c2", "find the callers", TokenUsage(input_other=30_000, output=2_000), 0.12)
    ledger.step(TokenUsage(input_other=6_500, input_cache_read=20_300, output=650))
    return ledger.report()


def test_cost_shows_the_session_the_turn_sub_agents_and_tools(snap_compare: Any) -> None:
    loop = FakeLoop(info=replace(INFO, provider="anthropic", model="claude-sonnet-4-5", demo=False))
    loop.cost_report = priced_report()
    app, _loop, _clock = make_app(loop)

    async def run_before(pilot: Pilot[None]) -> None:
        app.prompt_input.cursor_blink = False  # before any time passes: drawn, steady
        report = loop.cost_report
        assert report is not None
        loop.emit(
            ev.UsageChanged(
                total=report.session.usage,
                context_tokens=27_450,
                context_window=200_000,
                cost_usd=report.session.cost_usd,
            )
        )
        await pilot.press(*"/cost", "enter")
        await until(pilot, lambda: any(marker.startswith("Costs of") for marker in markers(app)))
        await settle(app, pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def next_request() -> LLMRequest:
    """A request a few steps into a session: a long system prompt, the built-in tools and an
    MCP server's, a prompt with a file attached, a tool call and its result."""
    prompt = attach("Why does the parser drop blank lines?", [Attachment("@src/reader.py", READ)])
    tools = tuple(
        ToolSpec(name=name, description="x" * 700, parameters={"type": "object"})
        for name in ("read_file", "edit_file", "write_file", "glob", "grep", "shell")
    )
    mcp = tuple(
        ToolSpec(name=f"mcp__git__{name}", description="y" * 500, parameters={"type": "object"})
        for name in ("status", "log", "diff")
    )
    call = ToolCall(id="c1", name="grep", arguments='{"pattern": "split"}')
    return LLMRequest(
        model="claude-sonnet-4-5",
        system="s" * 9_000,
        messages=(
            user_message(prompt),
            Message(role="assistant", content=(TextPart(text="Searching."),), tool_calls=(call,)),
            Message(role="tool", content=(TextPart(text="r" * 6_000),), tool_call_id="c1"),
        ),
        tools=tools + mcp,
    )


READ = "def parse(text):\n    return text.strip().split('\\n')\n" * 40


def test_context_shows_what_fills_the_window(snap_compare: Any) -> None:
    info = replace(INFO, provider="anthropic", model="claude-sonnet-4-5", demo=False)
    loop = FakeLoop(info=replace(info, context_window=32_000))  # a local model's window
    loop.request = next_request()
    app, _loop, _clock = make_app(loop)

    async def run_before(pilot: Pilot[None]) -> None:
        app.prompt_input.cursor_blink = False  # before any time passes: drawn, steady
        await pilot.press(*"/context", "enter")
        await until(pilot, lambda: any(marker.startswith("Context of") for marker in markers(app)))
        await settle(app, pilot)

    assert snap_compare(app, terminal_size=(100, 34), run_before=run_before)
