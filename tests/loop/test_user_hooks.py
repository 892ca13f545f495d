"""The person's hook commands through the loop's public API, with real hook scripts: each
event fires with Claude Code's JSON, exit 2 and JSON answers do what Claude Code says."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import FakeModel, Step, calls, text
from tests.support.hook_scripts import recorded, recorder
from tui_agent.context import EventLog, HookRan, read_log
from tui_agent.loop import events as ev
from tui_agent.loop.api import LoopInfo
from tui_agent.loop.factory import build_loop
from tui_agent.loop.service import AgentLoopService, LoopOptions
from tui_agent.loop.userhooks import HookEvent, HookSpec, UserHooks
from tui_agent.tools import EFFECTS, Effect, parse_rule

Maker = Callable[..., Any]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
async def hooked(tmp_path: Path, workspace: Path) -> AsyncIterator[Maker]:
    opened: list[AgentLoopService] = []

    async def make(
        steps: list[Step],
        hooks: list[HookSpec],
        *,
        mode: str = "yolo",
        interactive: bool = False,
        rules: tuple[str, ...] = (),
    ) -> tuple[AgentLoopService, FakeModel, list[ev.LoopEvent]]:
        model = FakeModel(list(steps))
        service = await build_loop(
            provider=model,
            info=LoopInfo(
                provider="scripted",
                model=model.model,
                context_window=128_000,
                approval_mode=mode,  # type: ignore[arg-type]
                session_id="hook-session",
                workspace=str(workspace),
                demo=False,
            ),
            workspace=workspace,
            spill_dir=tmp_path / "spill",
            log=EventLog(tmp_path / "events.jsonl"),
            system_prompt=lambda tools: "You are a test agent.",
            # Every tool and hook here honours an abort: a long grace never delays a test, and a
            # busy machine cannot outlast it (the turn would settle before a call's clean-up).
            options=LoopOptions(abort_grace_s=60),
            interactive=interactive,
            rules=[parse_rule(written, effect) for effect, written in map(_split, rules)],
            user_hooks=UserHooks(hooks, workspace),
        )
        seen: list[ev.LoopEvent] = []
        service.subscribe(seen.append)
        opened.append(service)
        return service, model, seen

    yield make
    for service in opened:
        await service.close()
        assert service.engine.errors == []


def _split(rule: str) -> tuple[Effect, str]:
    effect, _, written = rule.partition(" ")  # "deny Write(x)": the effect, then the rule
    assert effect in EFFECTS
    return effect, written


def hook(event: HookEvent, command: str, matcher: str = "", timeout_s: float = 30) -> HookSpec:
    return HookSpec(event=event, command=command, matcher=matcher, timeout_s=timeout_s)


def notices(seen: list[ev.LoopEvent]) -> list[str]:
    return [event.text for event in seen if isinstance(event, ev.Notice)]


def sent(model: FakeModel, index: int = -1) -> str:
    return json.dumps([m.model_dump() for m in model.requests[index].messages])


async def test_each_event_fires_once_with_claude_codes_json(
    hooked: Maker, tmp_path: Path, workspace: Path
) -> None:
    command, log = recorder(tmp_path)
    events: list[HookEvent] = [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "PreCompact",
        "SessionEnd",
    ]
    steps = [
        calls(("write_file", {"path": "n.txt", "content": "hi"})),
        text("Written."),
        text("SUMMARY"),
    ]
    service, _, _ = await hooked(steps, [hook(event, command) for event in events])
    await (await service.submit("write it")).result()
    await service.compact()
    await service.close()

    got = recorded(log)
    assert [entry["hook_event_name"] for entry in got] == events
    for entry in got:
        assert entry["session_id"] == "hook-session"
        assert entry["cwd"] == str(workspace)
        assert entry["transcript_path"].endswith("events.jsonl")
        assert entry["permission_mode"] == "bypassPermissions"
    start, prompt, pre, post, stop, compact, end = got
    assert start["source"] == "startup"
    assert prompt["prompt"] == "write it"
    assert pre["tool_name"] == "Write"
    assert pre["tool_input"] == {"file_path": str(workspace / "n.txt"), "content": "hi"}
    assert pre["tool_use_id"] == "call_0"
    assert post["tool_response"]["success"] is True
    assert post["tool_response"]["filePath"] == str(workspace / "n.txt")
    assert stop["stop_hook_active"] is False and stop["last_assistant_message"] == "Written."
    assert compact["trigger"] == "manual"
    assert end["reason"] == "other"
    ran = [r for r in read_log(tmp_path / "events.jsonl") if isinstance(r, HookRan)]
    assert [(r.event, r.exit_code) for r in ran] == [(e, 0) for e in events]


async def test_a_pre_tool_use_exit_2_refuses_the_call_with_stderr_as_its_result(
    hooked: Maker, tmp_path: Path, workspace: Path
) -> None:
    command, _ = recorder(tmp_path, "block")
    steps = [calls(("shell", {"command": "touch made"})), text("ok")]
    service, model, seen = await hooked(steps, [hook("PreToolUse", command, "Bash")])
    await (await service.submit("go")).result()

    assert not (workspace / "made").exists()
    assert "blocked: PreToolUse" in sent(model)
    assert any("blocked: blocked: PreToolUse" in text for text in notices(seen))


async def test_a_matcher_in_either_vocabulary_picks_its_tools(
    hooked: Maker, tmp_path: Path
) -> None:
    ours, ours_log = recorder(tmp_path, log="ours.jsonl")
    theirs, theirs_log = recorder(tmp_path, log="theirs.jsonl")
    other, other_log = recorder(tmp_path, log="other.jsonl")
    steps = [calls(("shell", {"command": "true"})), text("ok")]
    service, _, _ = await hooked(
        steps,
        [
            hook("PreToolUse", ours, "shell"),
            hook("PreToolUse", theirs, "Bash|Edit"),
            hook("PreToolUse", other, "Read"),
        ],
    )
    await (await service.submit("go")).result()

    assert len(recorded(ours_log)) == len(recorded(theirs_log)) == 1
    assert recorded(other_log) == []


async def test_a_user_prompt_submit_exit_2_keeps_the_prompt_from_the_model(
    hooked: Maker, tmp_path: Path
) -> None:
    command, _ = recorder(tmp_path, "block")
    service, model, seen = await hooked([text("never")], [hook("UserPromptSubmit", command)])
    handle = await service.submit("secret plans")
    await handle.result()

    assert model.requests == []
    assert handle.state == "blocked"
    assert any("The prompt was not sent: blocked: UserPromptSubmit" in t for t in notices(seen))


async def test_session_start_and_prompt_context_reach_the_model_with_the_prompt(
    hooked: Maker, tmp_path: Path
) -> None:
    start, _ = recorder(tmp_path, "context")
    extra = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "XYZ"}}
    )
    prompt, _ = recorder(tmp_path, extra)
    service, model, _ = await hooked(
        [text("ok")], [hook("SessionStart", start), hook("UserPromptSubmit", prompt)]
    )
    await (await service.submit("hello")).result()

    assert "the build command is make" in sent(model) and "XYZ" in sent(model)


async def test_a_stop_exit_2_keeps_the_turn_going_with_its_reason(
    hooked: Maker, tmp_path: Path
) -> None:
    command, log = recorder(tmp_path, "block-once")
    service, model, _ = await hooked([text("Done."), text("Test added.")], [hook("Stop", command)])
    result = await (await service.submit("fix it")).result()

    assert result.type == "completed" and result.steps == 2
    assert "add a test first" in sent(model)
    assert [entry["stop_hook_active"] for entry in recorded(log)] == [False, True]


async def test_a_pre_tool_use_deny_decision_refuses_with_its_reason(
    hooked: Maker, tmp_path: Path, workspace: Path
) -> None:
    deny = json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "not on Fridays",
            }
        }
    )
    command, _ = recorder(tmp_path, deny)
    steps = [calls(("write_file", {"path": "f.txt", "content": "x"})), text("ok")]
    service, model, _ = await hooked(steps, [hook("PreToolUse", command)])
    await (await service.submit("go")).result()

    assert not (workspace / "f.txt").exists()
    assert "not on Fridays" in sent(model)


def _decision(decision: str) -> str:
    output = {"hookEventName": "PreToolUse", "permissionDecision": decision}
    return json.dumps({"hookSpecificOutput": output})


async def test_a_pre_tool_use_allow_spares_the_question_but_not_a_deny_rule(
    hooked: Maker, tmp_path: Path, workspace: Path
) -> None:
    command, _ = recorder(tmp_path, _decision("allow"))
    steps = [
        calls(("write_file", {"path": "a.txt", "content": "x"})),
        calls(("write_file", {"path": "secret.txt", "content": "x"})),
        text("ok"),
    ]
    # Headless in ask mode: without the hook, the first write would be refused too.
    service, _, _ = await hooked(
        steps,
        [hook("PreToolUse", command)],
        mode="ask",
        rules=("deny Write(secret.txt)",),
    )
    await (await service.submit("go")).result()

    assert (workspace / "a.txt").exists()
    assert not (workspace / "secret.txt").exists()


async def test_a_pre_tool_use_ask_asks_even_in_yolo_mode(hooked: Maker, tmp_path: Path) -> None:
    command, _ = recorder(tmp_path, _decision("ask"))
    steps = [calls(("shell", {"command": "echo hi"})), text("ok")]
    service, model, seen = await hooked(
        steps, [hook("PreToolUse", command)], mode="yolo", interactive=True
    )
    handle = await service.submit("go")
    asked = await _approval(seen)
    await service.answer_approval(asked.request_id, "deny")
    await handle.result()

    assert asked.name == "shell"
    assert "The user denied" in sent(model)


async def _approval(seen: list[ev.LoopEvent]) -> ev.ApprovalRequested:
    while not any(isinstance(event, ev.ApprovalRequested) for event in seen):  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    return next(event for event in seen if isinstance(event, ev.ApprovalRequested))


async def test_a_post_tool_use_block_reason_reaches_the_model_with_the_result(
    hooked: Maker, tmp_path: Path
) -> None:
    command, _ = recorder(tmp_path, json.dumps({"decision": "block", "reason": "lint: E501"}))
    steps = [calls(("shell", {"command": "echo hi"})), text("ok")]
    service, model, _ = await hooked(steps, [hook("PostToolUse", command, "Bash")])
    await (await service.submit("go")).result()

    assert "lint: E501" in sent(model) and "hi" in sent(model)


async def test_continue_false_ends_the_turn(hooked: Maker, tmp_path: Path) -> None:
    stop = json.dumps({"continue": False, "stopReason": "enough for today"})
    command, _ = recorder(tmp_path, stop)
    steps = [calls(("shell", {"command": "echo hi"})), text("never asked")]
    service, model, seen = await hooked(steps, [hook("PostToolUse", command)])
    result = await (await service.submit("go")).result()

    assert result.type == "completed" and len(model.requests) == 1
    assert any("enough for today" in t for t in notices(seen))


async def test_another_exit_code_warns_and_the_call_goes_on(
    hooked: Maker, tmp_path: Path, workspace: Path
) -> None:
    command, _ = recorder(tmp_path, "fail")
    steps = [calls(("write_file", {"path": "w.txt", "content": "x"})), text("ok")]
    service, _, seen = await hooked(steps, [hook("PreToolUse", command)])
    await (await service.submit("go")).result()

    assert (workspace / "w.txt").exists()
    assert any("failed: exit 1" in t and "something broke" in t for t in notices(seen))


async def test_a_hook_that_runs_too_long_is_killed_and_the_call_goes_on(
    hooked: Maker, tmp_path: Path, workspace: Path
) -> None:
    command, log = recorder(tmp_path, "hang")
    steps = [calls(("write_file", {"path": "t.txt", "content": "x"})), text("ok")]
    service, _, seen = await hooked(steps, [hook("PreToolUse", command, timeout_s=1)])
    await (await service.submit("go")).result()

    assert (workspace / "t.txt").exists()
    assert any("timed out after 1 s (killed)" in t for t in notices(seen))
    assert not _alive(_pid(log))


async def test_cancelling_the_turn_kills_a_running_hook(hooked: Maker, tmp_path: Path) -> None:
    command, log = recorder(tmp_path, "hang")
    steps = [calls(("shell", {"command": "true"})), text("ok")]
    service, _, _ = await hooked(steps, [hook("PreToolUse", command, timeout_s=120)])
    handle = await service.submit("go")
    while not _pid(log):  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    await service.cancel()
    result = await handle.result()

    assert result.type == "cancelled"
    assert not _alive(_pid(log))


def _pid(log: Path) -> int:
    """The hanging hook's pid, once it wrote it (0 until then)."""
    file = Path(f"{log}.pid")
    return int(file.read_text() or 0) if file.exists() else 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purpose: read its state.
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "Z (zombie)" not in status.read_text()


async def test_a_sub_agents_end_fires_subagent_stop(hooked: Maker, tmp_path: Path) -> None:
    sub, sub_log = recorder(tmp_path, log="sub.jsonl")
    top, top_log = recorder(tmp_path, log="top.jsonl")
    task = {"description": "look", "prompt": "look around"}
    steps = [calls(("task", task)), text("child done"), text("parent done")]
    service, _, _ = await hooked(steps, [hook("SubagentStop", sub), hook("Stop", top)])
    await (await service.submit("delegate")).result()

    assert [e["last_assistant_message"] for e in recorded(sub_log)] == ["child done"]
    assert [e["last_assistant_message"] for e in recorded(top_log)] == ["parent done"]


async def test_a_waiting_approval_fires_notification(hooked: Maker, tmp_path: Path) -> None:
    command, log = recorder(tmp_path)
    steps = [calls(("shell", {"command": "echo hi"})), text("ok")]
    service, _, seen = await hooked(
        steps, [hook("Notification", command, "permission_prompt")], mode="ask", interactive=True
    )
    handle = await service.submit("go")
    asked = await _approval(seen)
    while not recorded(log):  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    await service.answer_approval(asked.request_id, "once")
    await handle.result()

    [note] = recorded(log)
    assert note["notification_type"] == "permission_prompt"
    assert note["message"] == "tui-agent needs your permission to use shell"


async def test_a_pre_compact_exit_2_keeps_the_history(hooked: Maker, tmp_path: Path) -> None:
    command, _ = recorder(tmp_path, "block")
    service, model, seen = await hooked([text("First.")], [hook("PreCompact", command, "manual")])
    await (await service.submit("hello")).result()
    await service.compact()

    assert len(model.requests) == 1  # no summary was asked for
    assert not any(isinstance(event, ev.Compacted) for event in seen)
    assert any("Compaction was blocked: blocked: PreCompact" in t for t in notices(seen))
