"""Hooks and the start-up trust prompt in the app: the prompt lists what the repository brings
before any of it runs, a yes lets the project's hooks run (a real hook script here), a no keeps
them off and says so; /hooks shows each hook, its source, its trust and its last run."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tests.support.hook_scripts import recorded, recorder
from tests.ui.fake_loop import INFO, FakeLoop
from tests.ui.real_loop import until
from tests.ui.scenes import make_app, settle
from tui_agent.loop.api import LoopApi
from tui_agent.loop.userhooks import HookInfo
from tui_agent.session import LoopConfig, TrustLine, open_loop, repository_prompt
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.hooks import Repository, SessionHooks
from tui_agent.ui.opening import OpeningLoop
from tui_agent.ui.trust_screen import TrustScreen
from tui_agent.ui.view_model import MarkerBlock

LINES = [
    TrustLine("server", "docs", "npx -y @acme/docs-mcp --stdio\n  env: DOCS_TOKEN"),
    TrustLine("server", "db", "uvx mcp-server-sqlite --db-path ./dev.db"),
    TrustLine("hook", "PreToolUse (Bash)", ".claude/hooks/guard.sh   [.claude/settings.json]"),
    TrustLine("hook", "PostToolUse (Edit|Write)", "npx prettier --write   [.claude/settings.json]"),
    TrustLine("allow rule", "Bash(make:*)", "[.tui-agent/settings.json]"),
    TrustLine("skill", "deploy", "Build and ship a release (.claude/skills)"),
    TrustLine("command", "/today", "runs date +%Y"),
]


def markers(app: TuiAgentApp) -> list[str]:
    return [block.text for block in app.vm.blocks if isinstance(block, MarkerBlock)]


def _asking(lines: list[TrustLine], trusted: list[bool]) -> SessionHooks:
    async def repository() -> Repository:
        return lines, lambda: trusted.append(True)

    return SessionHooks(repository=repository)


def test_the_trust_prompt_lists_servers_hooks_and_rules(snap_compare: Any) -> None:
    opened = asyncio.Event()

    async def opener() -> LoopApi:
        await opened.wait()
        return FakeLoop()

    app = TuiAgentApp(OpeningLoop(INFO, opener), hooks=_asking(LINES, []))
    app.prompt_input.cursor_blink = False

    async def run_before(pilot: Pilot[None]) -> None:
        await until(pilot, lambda: isinstance(app.screen, TrustScreen))
        await settle(app, pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


async def test_the_loop_opens_only_after_the_answer_and_a_yes_is_remembered() -> None:
    trusted: list[bool] = []
    real = FakeLoop()
    app = TuiAgentApp(OpeningLoop(INFO, _opener(real)), hooks=_asking(LINES, trusted))
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustScreen))
        assert app.loop is not real
        await pilot.press("y")
        await until(pilot, lambda: app.loop is real)
    assert trusted == [True]


async def test_a_no_opens_the_loop_and_trusts_nothing() -> None:
    trusted: list[bool] = []
    real = FakeLoop()
    app = TuiAgentApp(OpeningLoop(INFO, _opener(real)), hooks=_asking(LINES, trusted))
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustScreen))
        await pilot.press("n")
        await until(pilot, lambda: app.loop is real)
    assert trusted == []


def _project_app(
    tmp_path: Path, hooks: dict[str, Any], steps: list[dict[str, Any]]
) -> tuple[TuiAgentApp, Path]:
    """The app on a workspace whose `.claude/settings.json` holds `hooks`, asking at start-up
    as the command line does, then opening a real loop on the scripted `steps`."""
    workspace = tmp_path / "ws"
    (workspace / ".claude").mkdir(parents=True)
    (workspace / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": steps}))
    config = LoopConfig(workspace=workspace, provider="scripted", script=str(script))

    async def opener() -> LoopApi:
        return await open_loop(replace(config, trust_asked=True))

    asking = SessionHooks(repository=lambda: asyncio.to_thread(repository_prompt, config))
    info = replace(INFO, workspace=str(workspace))
    return TuiAgentApp(OpeningLoop(info, opener), hooks=asking), workspace


def _opener(loop: FakeLoop) -> Any:
    async def opener() -> LoopApi:
        return loop

    return opener


def test_hooks_lists_each_hook_with_its_source_trust_and_last_run(snap_compare: Any) -> None:
    loop = FakeLoop(
        hook_infos=(
            HookInfo(
                "PreToolUse", "Bash", "~/bin/guard.py", "config.toml", True, "exit 2 in 0.1 s"
            ),
            HookInfo(
                "PostToolUse", "Edit|Write", "ruff format", "~/.claude/settings.json", True, None
            ),
            HookInfo("Stop", "", "./hooks/check.sh", ".claude/settings.json", False, None),
        )
    )
    app, _loop, _clock = make_app(loop)

    async def run_before(pilot: Pilot[None]) -> None:
        await pilot.press(*"/hooks", "enter")
        await until(pilot, lambda: any(m.startswith("Hooks:") for m in markers(app)))
        await settle(app, pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


async def test_a_trusted_project_hook_runs_in_the_app_and_blocks_a_call(
    tmp_path: Path,
) -> None:
    guard, log = recorder(tmp_path, "block")
    call = {"name": "shell", "arguments": {"command": "touch made"}}
    app, workspace = _project_app(
        tmp_path,
        {"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": guard}]}]},
        [{"tool_calls": [call]}, {"text": "Refused."}],
    )
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustScreen))
        assert isinstance(app.screen, TrustScreen)
        assert [line.name for line in app.screen.lines] == ["PreToolUse (Bash)"]
        await pilot.press("y")
        await until(pilot, lambda: not isinstance(app.loop, OpeningLoop))
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: any("blocked: blocked: PreToolUse" in m for m in markers(app)))
        await pilot.press(*"/hooks", "enter")
        await until(pilot, lambda: any("last: exit 2" in m for m in markers(app)))
        await app.loop.close()
    assert not (workspace / "made").exists()
    assert [entry["tool_input"] for entry in recorded(log)] == [{"command": "touch made"}]


async def test_an_untrusted_project_hook_never_runs_and_the_app_says_so(tmp_path: Path) -> None:
    command, log = recorder(tmp_path)
    app, _ = _project_app(
        tmp_path,
        {"UserPromptSubmit": [{"hooks": [{"command": command}]}]},
        [{"text": "Hello."}],
    )
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustScreen))
        await pilot.press("n")
        await until(pilot, lambda: any("Not trusted, so skipped" in m for m in markers(app)))
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: app.vm.answers() == ["Hello."])
        await app.loop.close()
    assert recorded(log) == []
