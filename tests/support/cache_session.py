"""A scripted long turn through the real loop and a real HTTP provider, for prefix-cache checks.

`run_session` starts a local server that plays the model: step after step it asks for tools
(one or two `read_file` calls, once a tool that queues a reminder, once one that steers the
turn), reports a usage so large at one step that the loop compacts before the next, answers
the compaction's summary request, and ends with a text answer. It speaks either wire format
(OpenAI Chat Completions or Anthropic Messages) and returns every request body it received,
in order, tagged as a step or the summary request. The prefix-stability test and
`benchmarks/cache.py` both diff these bodies.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from tests.llm.server import LocalServer, Recorded, Reply
from tui_agent.context import SUMMARY_INSTRUCTIONS, EventLog
from tui_agent.llm import ProviderSettings, make_provider
from tui_agent.loop.api import LoopInfo
from tui_agent.loop.factory import build_loop
from tui_agent.loop.service import AgentLoopService, LoopOptions
from tui_agent.session import build_system_prompt
from tui_agent.tools import Tool, ToolContext
from tui_agent.vocab import ToolResult

Wire = Literal["openai", "anthropic"]
CONTEXT_WINDOW = 200_000
REMINDER = "<system-reminder>Run the tests before you say you are done.</system-reminder>"
STEER = "Also check that b.txt still parses."
SUMMARY = "## User requests\nFix the parser.\n\n## Progress and decisions\nRead a.txt often."
_SUMMARY_MARK = SUMMARY_INSTRUCTIONS.splitlines()[0][:40].encode()
_FILE_TEXT = "".join(f"line {n}: value = parse(token_{n}) or default_{n}\n" for n in range(60))


@dataclass(frozen=True)
class Captured:
    kind: Literal["step", "summary"]
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        """The body as a prefix cache reads it: tool table, system prompt, then the messages,
        one per line, without Anthropic's `cache_control` marks (they move every step and are
        not part of what is cached)."""
        body = _unmarked(self.body)
        lines = [json.dumps(body.get("tools"), ensure_ascii=False)]
        lines.append(json.dumps(body.get("system"), ensure_ascii=False))
        lines += [json.dumps(message, ensure_ascii=False) for message in body["messages"]]
        return "".join(f"{line}\n" for line in lines)

    @property
    def settings(self) -> dict[str, Any]:
        """Everything else in the body (model, limits, stream options): must never change."""
        return {k: v for k, v in self.body.items() if k not in ("tools", "system", "messages")}


def extends(previous: Captured, request: Captured) -> bool:
    """`request` starts with every byte of `previous` that a prefix cache would keep."""
    return request.settings == previous.settings and request.prompt.startswith(previous.prompt)


def _unmarked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


class _PokeArgs(BaseModel):
    what: Literal["remind", "steer"]


class Poke(Tool[_PokeArgs]):
    """Queues a reminder or steers the running turn, as the app would while a tool runs."""

    name: ClassVar[str] = "poke"
    description: ClassVar[str] = "Test tool: queue a reminder or a steer."
    Args = _PokeArgs
    read_only: ClassVar[bool] = True

    def __init__(self) -> None:
        self.service: AgentLoopService | None = None

    async def execute(self, args: _PokeArgs, ctx: ToolContext) -> ToolResult:
        assert self.service is not None
        if args.what == "remind":
            await self.service.remind("tests", REMINDER)
        else:
            await self.service.submit(STEER, steer_if_active=True)
        return ToolResult(output=f"{args.what}: queued")


def _calls(step: int) -> list[tuple[str, dict[str, str]]]:
    if step == 5:
        return [("poke", {"what": "remind"})]
    if step == 10:
        return [("poke", {"what": "steer"})]
    if step % 3 == 0:
        return [("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"})]
    return [("read_file", {"path": "a.txt"})]


def _sse(event: str | None, payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data}\n\n".encode()


def openai_reply(
    say: str, calls: list[tuple[str, dict[str, str]]], step: int, input_tokens: int
) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _sse(None, {"id": f"c{step}", "choices": [choice]})

    out = [chunk({"role": "assistant", "content": say})] if say else []
    for index, (name, args) in enumerate(calls):
        function = {"name": name, "arguments": json.dumps(args)}
        call = {"index": index, "id": f"call_{step}_{index}", "type": "function"}
        out.append(chunk({"tool_calls": [{**call, "function": function}]}))
    out.append(chunk({}, "tool_calls" if calls else "stop"))
    usage = {"prompt_tokens": input_tokens, "completion_tokens": 20}
    out.append(_sse(None, {"id": f"c{step}", "choices": [], "usage": usage}))
    out.append(_sse(None, "[DONE]"))
    return b"".join(out)


def anthropic_reply(
    say: str, calls: list[tuple[str, dict[str, str]]], step: int, input_tokens: int
) -> bytes:
    usage = {"input_tokens": input_tokens, "output_tokens": 1}
    out = [
        _sse(
            "message_start",
            {"type": "message_start", "message": {"id": f"m{step}", "usage": usage}},
        )
    ]
    blocks: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if say:
        blocks.append(({"type": "text", "text": ""}, {"type": "text_delta", "text": say}))
    for index, (name, args) in enumerate(calls):
        start = {"type": "tool_use", "id": f"toolu_{step}_{index}", "name": name, "input": {}}
        blocks.append((start, {"type": "input_json_delta", "partial_json": json.dumps(args)}))
    for index, (start, delta) in enumerate(blocks):
        out.append(
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        out.append(
            _sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        )
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = {"stop_reason": "tool_use" if calls else "end_turn"}
    out.append(
        _sse(
            "message_delta",
            {"type": "message_delta", "delta": stop, "usage": {"output_tokens": 20}},
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


class _Model:
    """Answers each request: a step of the script, or the compaction's summary."""

    def __init__(self, wire: Wire, steps: int, compact_after: int | None) -> None:
        self._reply = openai_reply if wire == "openai" else anthropic_reply
        self._steps = steps
        self._compact_after = compact_after
        self.step = 0
        self.captured: list[Captured] = []

    def __call__(self, request: Recorded) -> Reply:
        body = request.json()
        if _SUMMARY_MARK in request.body:
            self.captured.append(Captured("summary", body))
            return Reply(pieces=[self._reply(SUMMARY, [], 0, 1_000)])
        self.step += 1
        self.captured.append(Captured("step", body))
        # The reported input size is what the loop's compaction trigger reads.
        big = self.step == self._compact_after
        tokens = CONTEXT_WINDOW - 1_000 if big else len(request.body) // 4
        if self.step >= self._steps:
            return Reply(pieces=[self._reply("All fixed; the tests pass.", [], self.step, tokens)])
        say = "Checking the file again." if self.step % 4 == 0 else ""
        return Reply(pieces=[self._reply(say, _calls(self.step), self.step, tokens)])


async def run_session(
    wire: Wire, root: Path, *, steps: int = 30, compact_after: int | None = 18
) -> list[Captured]:
    """One turn of `steps` steps in a fresh workspace under `root`; the bodies the server saw."""
    workspace = root / "ws"
    workspace.mkdir(parents=True)
    (workspace / "a.txt").write_text(_FILE_TEXT)
    (workspace / "b.txt").write_text(_FILE_TEXT.upper())
    model = _Model(wire, steps, compact_after)
    server = LocalServer()
    server.answer = model
    await server.start()
    base = f"{server.url}/v1" if wire == "openai" else server.url
    settings = ProviderSettings(kind=wire, model="test-model", base_url=base, api_key="test-key")
    poke = Poke()
    service = await build_loop(
        provider=make_provider(settings),
        info=LoopInfo(
            provider=wire,
            model="test-model",
            context_window=CONTEXT_WINDOW,
            approval_mode="yolo",
            session_id="cache-session",
            workspace=str(workspace),
            demo=False,
        ),
        workspace=workspace,
        spill_dir=root / "spill",
        log=EventLog(root / "events.jsonl"),
        system_prompt=lambda tools: build_system_prompt(
            workspace, [], tools, today=date(2026, 12, 2)
        ),
        options=LoopOptions(max_steps=steps + 5),
        extra_tools=(poke,),
    )
    poke.service = service
    try:
        handle = await service.submit("Fix the parser bug in a.txt; read it first.")
        result = await handle.result()
        assert result.type == "completed", result
    finally:
        await service.close()
        await server.stop()
    return model.captured
