"""The scripted provider (script files) and the built-in offline demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.llm.helpers import Outcome, collect
from tui_agent.llm import (
    DemoScript,
    ProviderSettings,
    ScriptedProvider,
    ScriptFormatError,
    make_provider,
)
from tui_agent.vocab import (
    FinishReason,
    LLMErrorKind,
    LLMRequest,
    Message,
    TextDelta,
    TextPart,
    TokenUsage,
    ToolCall,
    user_message,
)

REQUEST = LLMRequest(model="scripted", messages=(user_message("go"),))


def _script(tmp_path: Path, steps: list[dict[str, object]]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"steps": steps}))
    return str(path)


async def test_script_steps_play_one_per_request(tmp_path: Path) -> None:
    path = _script(
        tmp_path,
        [
            {
                "thinking": "Plan.",
                "text": "Reading the readme now.",
                "tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}],
                "usage": {"input_other": 120, "output": 30},
                "chunk_delay_s": 0,
                "chunk_chars": 5,
            },
            {"text": "Done.", "finish": "max_tokens", "chunk_delay_s": 0},
        ],
    )
    provider = make_provider(ProviderSettings(kind="scripted", model="demo", script_path=path))
    first = await collect(provider.stream(REQUEST))
    second = await collect(provider.stream(REQUEST))
    assert first.thinking == "Plan."
    assert first.text == "Reading the readme now."
    assert sum(isinstance(e, TextDelta) for e in first.events) == 5  # 23 characters, 5 a chunk
    assert first.tool_calls == [("call_1_0", "read_file", '{"path": "README.md"}')]
    assert first.usage == TokenUsage(input_other=120, output=30)
    assert first.finish is not None and first.finish.reason is FinishReason.TOOL_USE
    assert second.text == "Done."
    assert second.finish is not None and second.finish.reason is FinishReason.MAX_TOKENS


async def test_error_step_streams_its_text_then_fails() -> None:
    provider = ScriptedProvider.from_steps(
        [
            {
                "text": "Partial",
                "chunk_delay_s": 0,
                "error": {
                    "kind": "rate_limit",
                    "message": "slow down",
                    "status": 429,
                    "retry_after_s": 1,
                },
            },
            {"text": "Recovered.", "chunk_delay_s": 0},
        ]
    )
    failed = await collect(provider.stream(REQUEST))
    assert failed.text == "Partial"
    assert failed.error is not None
    assert failed.error.kind is LLMErrorKind.RATE_LIMIT
    assert (failed.error.status, failed.error.retry_after_s) == (429, 1)
    assert (await collect(provider.stream(REQUEST))).text == "Recovered."


async def test_exhausted_script_says_it_has_ended() -> None:
    provider = ScriptedProvider.from_steps([{"text": "Only step.", "chunk_delay_s": 0}])
    await collect(provider.stream(REQUEST))
    out = await collect(provider.stream(REQUEST))
    assert "script has ended" in out.text
    assert out.finish is not None and out.finish.reason is FinishReason.END_TURN


def test_invalid_script_names_the_step_and_field(tmp_path: Path) -> None:
    path = _script(tmp_path, [{"text": "ok"}, {"tool_calls": [{"arguments": {}}]}])
    with pytest.raises(ScriptFormatError, match=r"step 2\.tool_calls\[0\].*'name'"):
        ScriptedProvider.from_file(path)


def test_unknown_step_field_is_refused() -> None:
    with pytest.raises(ScriptFormatError, match="unknown fields"):
        ScriptedProvider.from_steps([{"txt": "typo"}])


# --- the offline demo --------------------------------------------------------------------------


class DemoSession:
    """Plays the loop's part: runs the demo's tool calls against canned tool results."""

    def __init__(self, workspace: Path) -> None:
        self.provider = ScriptedProvider(DemoScript(str(workspace), chunk_delay_s=0))
        self.messages: list[Message] = []

    async def turn(self, prompt: str) -> Outcome:
        self.messages.append(user_message(prompt))
        return await self.step()

    async def step(self) -> Outcome:
        request = LLMRequest(model="scripted", messages=tuple(self.messages))
        out = await collect(self.provider.stream(request))
        calls = tuple(ToolCall(id=str(i), name=str(n), arguments=a) for i, n, a in out.tool_calls)
        self.messages.append(
            Message(role="assistant", content=(TextPart(text=out.text),), tool_calls=calls)
        )
        return out

    def answer(self, output: str, *, is_error: bool = False) -> None:
        call = self.messages[-1].tool_calls[-1]
        self.messages.append(
            Message(
                role="tool",
                tool_call_id=call.id,
                content=(TextPart(text=output),),
                is_error=is_error,
            )
        )


async def _walk_to_the_edit(session: DemoSession) -> Outcome:
    intro = await session.turn("hello")
    assert "offline demo" in intro.text
    assert [(n, json.loads(a)) for _, n, a in intro.tool_calls] == [("glob", {"pattern": "*"})]
    session.answer("LICENSE\nREADME.md\nsrc/app.py\n[3 more files not shown; narrow the pattern.]")
    read = await session.step()
    assert [(n, json.loads(a)) for _, n, a in read.tool_calls] == [
        ("read_file", {"path": "README.md"})
    ]
    session.answer("     1\t# Widget\n     2\tWidget makes widgets. A widget per Widget call.")
    search = await session.step()
    assert [(n, json.loads(a)) for _, n, a in search.tool_calls] == [
        ("grep", {"pattern": "Widget"})
    ]
    session.answer("README.md:1:# Widget\nREADME.md:2:Widget makes widgets.")
    edit = await session.step()
    [(_, name, arguments)] = edit.tool_calls
    assert name == "write_file"
    written = json.loads(arguments)
    assert written["path"] == "NOTES-tui-agent-demo.md"
    assert "README.md" in written["content"]
    assert "gave 2 lines" in written["content"]
    return edit


async def test_demo_walks_through_a_session_and_explains_the_keys(tmp_path: Path) -> None:
    session = DemoSession(tmp_path)
    await _walk_to_the_edit(session)
    session.answer("Wrote NOTES-tui-agent-demo.md (6 lines).")
    wrap = await session.step()
    assert wrap.tool_calls == []
    assert wrap.finish is not None and wrap.finish.reason is FinishReason.END_TURN
    for words in ("is written", "Ctrl+S", "Esc", "/help", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        assert words in wrap.text


async def test_demo_takes_a_denied_edit_gracefully(tmp_path: Path) -> None:
    session = DemoSession(tmp_path)
    await _walk_to_the_edit(session)
    session.answer("The user denied this tool call.", is_error=True)
    wrap = await session.step()
    assert "declined" in wrap.text
    assert "offline demo" in wrap.text


async def test_demo_answers_a_later_prompt_with_one_shell_command(tmp_path: Path) -> None:
    session = DemoSession(tmp_path)
    await _walk_to_the_edit(session)
    session.answer("ok")
    await session.step()
    later = await session.turn("refactor the parser")
    assert [(n, json.loads(a)) for _, n, a in later.tool_calls] == [("shell", {"command": "ls"})]
    assert "refactor the parser" in later.text
    session.answer("README.md\nsrc\n")
    after = await session.step()
    assert after.tool_calls == []
    assert "2 lines" in after.text


async def test_demo_falls_back_to_the_workspace_when_glob_finds_nothing(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("TODO: water the plants\n")
    session = DemoSession(tmp_path)
    await session.turn("hi")
    session.answer('No files match "*" in the workspace.')
    read = await session.step()
    assert [(n, json.loads(a)) for _, n, a in read.tool_calls] == [
        ("read_file", {"path": "notes.txt"})
    ]


async def test_scripted_provider_without_a_script_is_the_demo(tmp_path: Path) -> None:
    settings = ProviderSettings(kind="scripted", model="demo", workspace=str(tmp_path))
    out = await collect(make_provider(settings).stream(REQUEST))
    assert str(tmp_path) in out.text
    assert [name for _, name, _ in out.tool_calls] == ["glob"]
