"""Images in prompts through the real loop and real keys: `@shot.png`, a pasted image path and
Ctrl+V attach it; the transcript shows a chip with its name, pixels and bytes; the image is
kept in the session log, comes back with `--continue`, and the HTML export shows it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image
from textual import events

from tests.ui.real_loop import scripted_loop, until
from tests.ui.test_flows import app_on, send
from tui_agent.context import Prompt, read_log
from tui_agent.loop.api import LoopApi
from tui_agent.session import Session, export_session
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.view_model import MarkerBlock, UserBlock
from tui_agent.ui.widgets.blocks import UserPrompt
from tui_agent.vocab import ImagePart, Message


def png_bytes(width: int = 40, height: int = 30) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 40, 40)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "shot.png").write_bytes(png_bytes())
    return root


def prompts(loop: LoopApi) -> list[Message]:
    return [e.message for e in loop.history() if e.message.role == "user"]


def images(message: Message) -> list[ImagePart]:
    return [p for p in message.content if isinstance(p, ImagePart)]


def markers(app: TuiAgentApp, kind: str) -> list[str]:
    return [b.text for b in app.vm.blocks if isinstance(b, MarkerBlock) and b.kind == kind]


CHIP = "@shot.png · 40×30 · 1 KB"


async def test_a_mentioned_image_is_sent_shown_as_a_chip_kept_resumed_and_exported(
    workspace: Path,
) -> None:
    async with app_on([{"text": "A red square."}], workspace) as (app, pilot, loop):
        await send(pilot, "what is in @shot.png ?")
        await until(pilot, lambda: not app.vm.busy and len(prompts(loop)) == 1)
        (sent,) = prompts(loop)
        (image,) = images(sent)
        assert image.media_type == "image/png" and image.data
        assert sent.text.startswith("what is in @shot.png ?")
        await until(pilot, lambda: bool(app.screen.query(UserPrompt)))
        chip = str(app.screen.query_one(UserPrompt).render())
        assert CHIP in chip and "image shot.png" not in chip  # the note is for the model
    session = Session.open(loop.info.session_id)
    assert session is not None
    records = read_log(session.events_path)
    (logged,) = [r for r in records if isinstance(r, Prompt)]
    assert images(logged.message) == [image]
    # --continue: the model sees the image again, the screen shows the chip again.
    resumed = await scripted_loop([{"text": "Still red."}], workspace=workspace, resume=True)
    try:
        assert [images(m) for m in prompts(resumed)] == [[image]]
        app = TuiAgentApp(resumed)
        async with app.run_test(size=(120, 36)) as pilot:
            await until(pilot, lambda: bool(app.screen.query(UserPrompt)))
            assert CHIP in str(app.screen.query_one(UserPrompt).render())
    finally:
        await resumed.close()
    page = export_session(records, "html")
    assert f'<img class="image" alt="attached image" src="data:image/png;base64,{image.data}">' in (
        page
    )
    assert f"**{CHIP} (attached)**" in export_session(records, "md")


async def test_a_pasted_image_path_becomes_a_mention(workspace: Path, tmp_path: Path) -> None:
    dropped = tmp_path / "Screen Shot.png"
    dropped.write_bytes(png_bytes(8, 8))
    async with app_on([{"text": "Seen."}], workspace) as (app, pilot, loop):
        app.prompt_input.post_message(events.Paste(f"'{dropped}'"))
        await until(pilot, lambda: bool(app.prompt_input.text))
        assert app.prompt_input.text == f'@"{dropped}" '
        await pilot.press("enter")
        await until(pilot, lambda: not app.vm.busy and len(prompts(loop)) == 1)
        assert len(images(prompts(loop)[0])) == 1


async def test_ctrl_v_attaches_the_clipboards_image_to_the_next_prompt(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tui_agent.session._images.clipboard_image", lambda: png_bytes(20, 10))
    async with app_on([{"text": "Seen."}], workspace) as (app, pilot, loop):
        await pilot.press("ctrl+v")
        await until(pilot, lambda: bool(markers(app, "info")))
        assert markers(app, "info") == [
            "the clipboard's image (20×10 · 1 KB) goes with your next prompt"
        ]
        await send(pilot, "and this one?")
        await until(pilot, lambda: not app.vm.busy and len(prompts(loop)) == 1)
        (sent,) = prompts(loop)
        assert len(images(sent)) == 1
        (block,) = [b for b in app.vm.blocks if isinstance(b, UserBlock)]
        assert "clipboard image · 20×10 · 1 KB" in block.text


async def test_ctrl_v_without_an_image_says_so(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tui_agent.session._images.clipboard_image", lambda: None)
    async with app_on([], workspace) as (app, pilot, _loop):
        await pilot.press("ctrl+v")
        await until(pilot, lambda: bool(markers(app, "warning")))
        assert markers(app, "warning") == [
            "no image on the clipboard (it is read with wl-paste or xclip)"
        ]


async def test_an_image_that_cannot_be_attached_stops_the_prompt_and_keeps_it(
    workspace: Path,
) -> None:
    (workspace / "broken.png").write_text("not a picture")
    async with app_on([{"text": "unused"}], workspace) as (app, pilot, loop):
        await send(pilot, "look at @broken.png")
        await until(pilot, lambda: bool(markers(app, "warning")))
        (warning,) = markers(app, "warning")
        assert warning.startswith("not sent: broken.png is not an image that can be read")
        assert app.prompt_input.text == "look at @broken.png"
        assert prompts(loop) == []
