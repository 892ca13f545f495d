"""Prompt power through the real loop and real keys: @ completion and attachments, !commands,
Ctrl+R history search, Ctrl+G external editor, folded pastes and custom slash commands."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import pytest
from textual import events

from tests.ui.fake_loop import INFO
from tests.ui.real_loop import gated, release, until
from tests.ui.test_flows import app_on, send
from tui_agent.context import UserCommand, read_log
from tui_agent.loop.replay import replay
from tui_agent.session import Session, export_session
from tui_agent.ui.history_search import HistorySearch
from tui_agent.ui.view_model import MarkerBlock, TextBlock, ToolBlock, ViewModel


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src/app").mkdir(parents=True)
    (root / "src/app/main.py").write_text("def main():\n    return 42\n")
    (root / "README.md").write_text("hello\n")
    return root


def user_texts(loop: object) -> list[str]:
    return [e.message.text for e in loop.history() if e.message.role == "user"]  # type: ignore[attr-defined]


async def type_keys(pilot: object, text: str) -> None:
    for char in text:
        await pilot.press(char)  # type: ignore[attr-defined]


async def test_at_completes_paths_and_the_file_goes_with_the_prompt(workspace: Path) -> None:
    async with app_on([{"text": "Seen."}], workspace) as (app, pilot, loop):
        await until(pilot, lambda: app.power.index is not None and app.power.index.ready.is_set())
        await type_keys(pilot, "explain @mai")
        await until(pilot, lambda: bool(app.paths.display))
        assert app.paths.chosen == "src/app/main.py"
        await pilot.press("tab")
        assert app.prompt_input.text == "explain @src/app/main.py "
        assert not app.paths.display
        await pilot.press("enter")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
    (sent,) = user_texts(loop)
    assert sent.startswith("explain @src/app/main.py")
    assert '<context source="@src/app/main.py">' in sent and "return 42" in sent
    shown = next(b for b in app.vm.blocks if type(b).__name__ == "UserBlock")
    assert "return 42" in shown.text  # the chip is drawn from it; the words come first


def notes(app: object) -> list[str]:
    return [b.text for b in app.vm.blocks if isinstance(b, MarkerBlock) and b.kind == "info"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("prompt", "unresolved"),
    [
        ("why does @dataclass need eq=True here?", "@dataclass"),
        ("use @pytest.fixture(scope='module') for it", "@pytest.fixture"),
        ("install @types/node first", "@types/node"),
        ("add @Override above toString", "@Override"),
        ("class A:\n    @property\n    def x(self): ...", "@property"),
    ],
)
async def test_a_mention_that_is_no_path_is_sent_as_text_with_a_dim_note(
    workspace: Path, prompt: str, unresolved: str
) -> None:
    async with app_on([{"text": "Answered."}], workspace) as (app, pilot, loop):
        await send(pilot, prompt)
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
        assert user_texts(loop) == [prompt]  # nothing attached, nothing held back
        (note,) = notes(app)
        assert unresolved in note and "sent as text" in note
        assert not any(b.kind == "warning" for b in app.vm.blocks if isinstance(b, MarkerBlock))


async def test_an_email_address_is_no_mention(workspace: Path) -> None:
    async with app_on([{"text": "Answered."}], workspace) as (app, pilot, loop):
        await send(pilot, "write to dev@example.com about it")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
    assert user_texts(loop) == ["write to dev@example.com about it"]
    assert notes(app) == []


async def test_a_file_is_attached_beside_a_mention_that_is_no_path(workspace: Path) -> None:
    async with app_on([{"text": "Answered."}], workspace) as (app, pilot, loop):
        await send(pilot, "does @README.md mention @dataclass?")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
    (sent,) = user_texts(loop)
    assert sent.startswith("does @README.md mention @dataclass?")
    assert '<context source="@README.md">' in sent and '@dataclass"' not in sent
    (note,) = notes(app)
    assert "@dataclass" in note and "README" not in note


async def test_mentions_inside_a_paste_chip_are_pasted_text(workspace: Path) -> None:
    code = "\n".join(["@app.route('/')", "@README.md", *[f"x{n} = {n}" for n in range(12)]])
    async with app_on([{"text": "Read it."}], workspace) as (app, pilot, loop):
        app.post_message(events.Paste(code))
        await until(pilot, lambda: "[pasted #1: 14 lines]" in app.prompt_input.text)
        await type_keys(pilot, " why?")
        await pilot.press("enter")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
    assert user_texts(loop) == [code + " why?"]  # neither a note nor an attached README
    assert notes(app) == []


async def test_a_bang_command_runs_and_its_output_goes_with_the_next_prompt(
    workspace: Path,
) -> None:
    async with app_on([{"text": "Noted."}], workspace) as (app, pilot, loop):
        await send(pilot, "!echo from-the-shell")
        await until(
            pilot,
            lambda: any(isinstance(b, ToolBlock) and b.state == "done" for b in app.vm.blocks),
        )
        block = next(b for b in app.vm.blocks if isinstance(b, ToolBlock))
        assert block.name == "!" and "from-the-shell" in block.output
        assert user_texts(loop) == []  # no model call for it
        await send(pilot, "what did it say?")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
    (sent,) = user_texts(loop)
    assert sent.startswith("what did it say?")
    assert '<context source="!echo from-the-shell">' in sent and "from-the-shell" in sent


async def test_a_bang_command_is_kept_in_the_log_for_resume_and_export(
    workspace: Path,
) -> None:
    async with app_on([{"text": "Noted."}], workspace) as (app, pilot, loop):
        await send(pilot, "!echo from-the-shell; exit 3")
        await until(
            pilot,
            lambda: any(isinstance(b, ToolBlock) and b.state != "running" for b in app.vm.blocks),
        )
        await send(pilot, "what did it say?")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
        row = next(b for b in app.vm.blocks if isinstance(b, ToolBlock))
    session = Session.open(loop.info.session_id)
    assert session is not None
    records = read_log(session.events_path)
    (logged,) = [r for r in records if isinstance(r, UserCommand)]
    assert logged.command == "echo from-the-shell; exit 3"
    assert (logged.output, logged.status) == (row.output, row.state)
    # A resumed transcript draws the row again, with the status it had.
    resumed = ViewModel(INFO, clock=lambda: 0.0)
    for event in replay(records, context_window=0).events:
        resumed.apply(event)
    (again,) = [b for b in resumed.blocks if isinstance(b, ToolBlock)]
    assert (again.name, again.summary, again.state) == ("!", logged.command, row.state)
    # The export shows the command with its output once; the prompt names what went with it.
    markdown = export_session(records, "md")
    assert f"`$ {logged.command}`**" in markdown
    assert markdown.count("from-the-shell\n") == 1
    assert f"**$ {logged.command} (its output, shown above, went with the prompt)**" in markdown


async def test_esc_stops_a_running_bang_command(workspace: Path) -> None:
    gate = workspace / "never"
    async with app_on([], workspace) as (app, pilot, _loop):
        await send(pilot, f"!echo started; while [ ! -e {gate} ]; do sleep 0.05; done")
        await until(
            pilot,
            lambda: any(isinstance(b, ToolBlock) and "started" in b.output for b in app.vm.blocks),
        )
        await pilot.press("escape")
        await until(
            pilot,
            lambda: any(isinstance(b, ToolBlock) and b.state == "aborted" for b in app.vm.blocks),
        )


async def test_ctrl_r_finds_an_earlier_prompt_of_this_workspace(workspace: Path) -> None:
    steps = [{"text": "one"}, {"text": "two"}]
    async with app_on(steps, workspace) as (app, pilot, loop):
        # The prompt history opens after the first frame: a prompt sent before is not kept.
        await until(pilot, lambda: app.power.index is not None)
        await send(pilot, "fix the parser")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
        await send(pilot, "write the docs")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 2)
    async with app_on([], workspace) as (app, pilot, _loop):  # a new session, same workspace
        await until(pilot, lambda: len(app.prompt_input.prompt_history) == 2)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(app.screen, HistorySearch))
        await type_keys(pilot, "pars")
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, HistorySearch))
        assert app.prompt_input.text == "fix the parser"


async def test_ctrl_g_replaces_the_draft_with_what_the_editor_saved(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = tmp_path / "fake-editor"
    editor.write_text('#!/bin/sh\nprintf "edited in the editor" > "$1"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("VISUAL", str(editor))
    async with app_on([], workspace) as (app, pilot, _loop):
        await type_keys(pilot, "draft")
        await pilot.press("ctrl+g")
        await until(pilot, lambda: app.prompt_input.text == "edited in the editor")


async def test_the_turn_goes_on_while_the_editor_is_open(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened, close = tmp_path / "editor-opened", tmp_path / "editor-close"
    editor = tmp_path / "fake-editor"
    editor.write_text(
        f'#!/bin/sh\ntouch "{opened}"\nuntil [ -e "{close}" ]; do sleep 0.01; done\n'
        'printf "written while the turn ran" > "$1"\n'
    )
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("VISUAL", str(editor))
    steps = [{"text": "checking", "tool_calls": [gated("check")]}, {"text": "all done"}]
    async with app_on(steps, workspace) as (app, pilot, _loop):
        await send(pilot, "start")
        await until(pilot, lambda: any(isinstance(b, ToolBlock) for b in app.vm.blocks))
        await type_keys(pilot, "next")
        await pilot.press("ctrl+g")
        await until(pilot, opened.exists)
        release(workspace, "check")  # the tool ends, the model answers: all while editing
        await until(pilot, lambda: not app.vm.busy and "all done" in answers(app))
        assert app.prompt_input.text == "next"  # the editor is still open
        close.touch()
        await until(pilot, lambda: app.prompt_input.text == "written while the turn ran")


def answers(app: object) -> str:
    return "\n".join(b.text for b in app.vm.blocks if isinstance(b, TextBlock))  # type: ignore[attr-defined]


async def test_a_long_paste_shows_as_a_chip_and_is_sent_whole(workspace: Path) -> None:
    pasted = "\n".join(f"line {n}" for n in range(200))
    async with app_on([{"text": "Read it."}], workspace) as (app, pilot, loop):
        app.prompt_input.post_message(events.Paste(pasted))
        await until(pilot, lambda: "[pasted #1: 200 lines]" in app.prompt_input.text)
        await type_keys(pilot, " explain")
        await pilot.press("enter")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
    assert user_texts(loop) == [pasted + " explain"]


@pytest.mark.parametrize("line_end", ["\r", "\r\n"])
async def test_a_paste_with_cr_line_ends_folds_and_is_sent_with_lf(
    workspace: Path, line_end: str
) -> None:
    lines = [f"line {n}" for n in range(30)]
    async with app_on([{"text": "Read it."}], workspace) as (app, pilot, loop):
        app.post_message(events.Paste(line_end.join(lines)))  # as the terminal's driver does
        await until(pilot, lambda: "[pasted #1: 30 lines]" in app.prompt_input.text)
        await pilot.press("enter")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
    assert user_texts(loop) == ["\n".join(lines)]


async def test_a_short_cr_paste_is_inserted_once_as_lines(workspace: Path) -> None:
    async with app_on([], workspace) as (app, pilot, _loop):
        app.post_message(events.Paste("a\rb\r\nc"))
        await until(pilot, lambda: bool(app.prompt_input.text))
        assert app.prompt_input.text == "a\nb\nc"


async def test_ctrl_o_unfolds_a_paste_into_the_draft(workspace: Path) -> None:
    pasted = "\n".join(str(n) for n in range(12))
    async with app_on([], workspace) as (app, pilot, _loop):
        app.prompt_input.post_message(events.Paste(pasted))
        await until(pilot, lambda: "[pasted #1: 12 lines]" in app.prompt_input.text)
        await pilot.press("ctrl+o")
        assert app.prompt_input.text == pasted


async def test_a_custom_command_with_arguments_is_completed_and_sent(workspace: Path) -> None:
    commands = workspace / ".tui-agent/commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: Review a file carefully\n---\nReview $ARGUMENTS for bugs."
    )
    async with app_on([{"text": "Reviewed."}], workspace) as (app, pilot, loop):
        await until(pilot, lambda: bool(app.power.commands))
        await type_keys(pilot, "/rev")
        await until(pilot, lambda: app.completion.chosen is not None)
        assert app.completion.chosen is not None and app.completion.chosen.name == "review"
        await pilot.press("tab")
        await type_keys(pilot, "main.py")
        assert app.prompt_input.text == "/review main.py"
        await pilot.press("enter")
        await until(pilot, lambda: not app.vm.busy and len(user_texts(loop)) == 1)
        await send(pilot, "/help")
        await until(pilot, lambda: "/review" in markers(app))
    assert user_texts(loop) == ["Review main.py for bugs."]
    assert "Review a file carefully" in markers(app)


def markers(app: object) -> str:
    return "\n".join(b.text for b in app.vm.blocks if isinstance(b, MarkerBlock))  # type: ignore[attr-defined]


async def test_the_workspace_listing_ends_with_the_app(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A listing still running when the app ends is stopped and awaited by the app itself, so
    # `asyncio.run` never has to cancel a process being started (that can hang on Python 3.11).
    from tui_agent.session import FileIndex

    started, never = asyncio.Event(), asyncio.Event()

    async def slow_load(self: FileIndex, signal: object = None) -> None:
        started.set()
        await never.wait()

    monkeypatch.setattr(FileIndex, "load", slow_load)
    async with app_on([{"text": "unused"}], workspace) as (app, pilot, _loop):
        await until(pilot, started.is_set)
        power = app.power
        listing = power._listing
        assert listing is not None and not listing.done()
    assert listing.cancelled()
    # Opened again after the close (a late `open` of the ending app), it lists nothing.
    await power.open(workspace)
    assert power._listing is None
