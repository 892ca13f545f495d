"""`/context`: each part of the next request counted (four characters a token, rounded up)."""

from __future__ import annotations

from pathlib import Path

from tests.ui.real_loop import scripted_loop, until
from tui_agent.session import Attachment, ProjectInstructions, attach
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.context_view import context_items, context_text
from tui_agent.ui.view_model import MarkerBlock
from tui_agent.vocab import LLMRequest, Message, TextPart, ToolSpec, user_message

MEMORY = ProjectInstructions("AGENTS.md", "m" * 400)  # 100 tokens


def request() -> LLMRequest:
    prompt = attach("look at this", [Attachment("@notes.txt", "n" * 800)])
    return LLMRequest(
        model="demo",
        system="s" * 1200 + "\n" + MEMORY.text,  # 1601 characters: 401 tokens
        messages=(
            user_message(prompt),
            Message(role="assistant", content=(TextPart(text="a" * 80),)),  # 20 tokens
        ),
        tools=(
            ToolSpec(name="read_file", description="d" * 38, parameters={}),  # 9+38+2 = 49 ch
            ToolSpec(name="mcp__git__log", description="g" * 37, parameters={}),  # 13+37+2 ch
        ),
    )


def test_each_part_of_the_request_is_counted() -> None:
    items = {item.name: item for item in context_items(request(), [MEMORY])}
    assert items["Memory files"].tokens == 100 and items["Memory files"].parts == (
        ("AGENTS.md", 100),
    )
    assert items["System prompt"].tokens == 401 - 100
    assert items["Tools"].tokens == 13  # 49 characters
    assert items["MCP tools"].parts == (("git", 13),)  # 52 characters
    assert items["Attachments"].parts == (("@notes.txt", 200),)  # 800 characters
    prompt_tokens = -(-len(request().messages[0].text) // 4)
    assert items["Messages"].tokens == prompt_tokens - 200 + 20


def test_the_picture_has_a_bar_a_legend_and_the_free_space() -> None:
    text = context_text(request(), [MEMORY], window=2_000, measured=640)
    lines = text.splitlines()
    assert lines[0].startswith("Context of demo: ~") and "of 2.0k tokens" in lines[0]
    assert lines[1] == "estimated at 4 characters a token; the last request measured 640"
    assert len(lines[2]) == 50 and lines[2].startswith("█") and lines[2].endswith("·")
    assert lines[-1].startswith("· Free")


async def test_context_pictures_the_real_loops_next_request(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Always run the tests.\n")
    loop = await scripted_loop([{"text": "Hello.", "chunk_delay_s": 0}], workspace=workspace)
    app = TuiAgentApp(loop)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.press(*"/context", "enter")
            await until(pilot, lambda: any(isinstance(b, MarkerBlock) for b in app.vm.blocks))
            shown = [b.text for b in app.vm.blocks if isinstance(b, MarkerBlock)][-1]
            assert "    AGENTS.md  6" in shown  # 22 characters: 6 tokens
            assert "tools" in shown and "▒ Tools" in shown
    finally:
        await app.loop.close()


def test_an_unknown_window_shows_no_shares() -> None:
    assert "%" not in context_text(request(), [MEMORY], window=0, measured=0)
