"""The scripted provider: plays assistant steps from a JSON script, one step per request.

It yields the same events as the real providers (a message id, deltas streamed in small
chunks with a delay so a UI shows streaming, usage, then `Finished` or `StreamFailed`), which
makes it the engine of the offline demo and of tests that need a model without a network.

Script format (a JSON file, `--script FILE`)::

    {"steps": [
      {"text": "Let me look.",              # streamed as text deltas
       "thinking": "The user wants...",      # streamed as thinking, before the text
       "tool_calls": [{"id": "call_1",       # optional; default "call_<step>_<n>"
                       "name": "read_file",
                       "arguments": {"path": "README.md"}}],   # an object, or a JSON string
       "usage": {"input_other": 120, "output": 30},            # TokenUsage fields; default
                                                               # estimated as characters / 4
       "finish": "end_turn",                 # a FinishReason value; default end_turn, or
                                             # tool_use when the step has tool calls
       "chunk_delay_s": 0.01,                # pause between chunks (default 0.01)
       "chunk_chars": 12},                   # characters per chunk (default 12)
      {"text": "Partial answer",             # text streamed before the failure, then:
       "error": {"kind": "rate_limit", "message": "slow down", "status": 429,
                 "retry_after_s": 1}}        # kind: an LLMErrorKind value
    ]}

Every field of a step is optional. Each request plays the next step (a retried request gets
the next one, so a script can fail once and then succeed); once the steps are used up, every
request gets a short text saying the script has ended.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import (
    Finish,
    Finished,
    FinishReason,
    LLMError,
    LLMErrorKind,
    LLMRequest,
    MessageIdReported,
    StreamEvent,
    StreamFailed,
    TextDelta,
    ThinkDelta,
    TokenUsage,
    ToolCallDelta,
    UsageReported,
)


class ScriptFormatError(ValueError):
    """A script file that does not follow the format in this module's docstring."""


@dataclass(frozen=True)
class ScriptToolCall:
    name: str
    arguments: str  # JSON text, as a model would send it
    id: str | None = None


@dataclass(frozen=True)
class ScriptStep:
    text: str = ""
    thinking: str = ""
    tool_calls: tuple[ScriptToolCall, ...] = ()
    error: LLMError | None = None
    usage: TokenUsage | None = None
    finish: FinishReason | None = None
    chunk_delay_s: float = 0.01
    chunk_chars: int = 12


_STEP_FIELDS = frozenset(
    {"text", "thinking", "tool_calls", "error", "usage", "finish", "chunk_delay_s", "chunk_chars"}
)
_USAGE_FIELDS = frozenset(TokenUsage.model_fields)


def _expect(condition: bool, where: str, what: str) -> None:
    if not condition:
        raise ScriptFormatError(f"{where}: {what}")


def _object(raw: object, where: str, allowed: frozenset[str]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ScriptFormatError(f"{where}: expected an object")
    unknown = set(raw) - allowed
    _expect(not unknown, where, f"unknown fields {sorted(unknown)}")
    return raw


def _tool_call(raw: object, where: str) -> ScriptToolCall:
    fields = _object(raw, where, frozenset({"id", "name", "arguments"}))
    name, call_id, arguments = fields.get("name"), fields.get("id"), fields.get("arguments", {})
    _expect(isinstance(name, str) and bool(name), where, "'name' must be a non-empty string")
    _expect(call_id is None or isinstance(call_id, str), where, "'id' must be a string")
    _expect(isinstance(arguments, dict | str), where, "'arguments' must be an object or a string")
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ScriptToolCall(name=str(name), arguments=text, id=call_id)


def _error(raw: object, where: str) -> LLMError:
    fields = _object(raw, where, frozenset({"kind", "message", "status", "retry_after_s"}))
    kinds = [k.value for k in LLMErrorKind]
    _expect(fields.get("kind") in kinds, where, f"'kind' must be one of {kinds}")
    status, retry = fields.get("status"), fields.get("retry_after_s")
    _expect(status is None or isinstance(status, int), where, "'status' must be an integer")
    _expect(retry is None or isinstance(retry, int | float), where, "'retry_after_s': a number")
    return LLMError(
        kind=LLMErrorKind(fields["kind"]),
        message=str(fields.get("message") or f"scripted {fields['kind']} error"),
        status=status,
        retry_after_s=retry,
        provider="scripted",
    )


def parse_step(raw: object, where: str = "step") -> ScriptStep:
    """One step of the script format (see the module docstring), checked field by field."""
    fields = _object(raw, where, _STEP_FIELDS)
    for name in ("text", "thinking"):
        _expect(isinstance(fields.get(name, ""), str), where, f"'{name}' must be a string")
    calls = fields.get("tool_calls", [])
    _expect(isinstance(calls, list), where, "'tool_calls' must be a list")
    usage = fields.get("usage")
    if usage is not None:
        _expect(
            isinstance(usage, dict)
            and set(usage) <= _USAGE_FIELDS
            and all(isinstance(v, int) and v >= 0 for v in usage.values()),
            where,
            f"'usage' must map {sorted(_USAGE_FIELDS)} to counts",
        )
    finish = fields.get("finish")
    reasons = [r.value for r in FinishReason]
    _expect(finish is None or finish in reasons, where, f"'finish' must be one of {reasons}")
    delay, chars = fields.get("chunk_delay_s", 0.01), fields.get("chunk_chars", 12)
    _expect(isinstance(delay, int | float) and delay >= 0, where, "'chunk_delay_s' must be >= 0")
    _expect(isinstance(chars, int) and chars > 0, where, "'chunk_chars' must be a positive integer")
    error = fields.get("error")
    return ScriptStep(
        text=fields.get("text", ""),
        thinking=fields.get("thinking", ""),
        tool_calls=tuple(_tool_call(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(calls)),
        error=_error(error, f"{where}.error") if error is not None else None,
        usage=TokenUsage(**usage) if usage is not None else None,
        finish=FinishReason(finish) if finish is not None else None,
        chunk_delay_s=float(delay),
        chunk_chars=chars,
    )


def parse_script(raw: object) -> tuple[ScriptStep, ...]:
    """A whole script: `{"steps": [...]}`."""
    fields = _object(raw, "script", frozenset({"steps"}))
    steps = fields.get("steps")
    if not isinstance(steps, list):
        raise ScriptFormatError('script: expected {"steps": [...]}')
    return tuple(parse_step(step, f"step {n}") for n, step in enumerate(steps, 1))


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _request_chars(request: LLMRequest) -> int:
    chars = len(request.system)
    for message in request.messages:
        chars += len(message.text) + len(message.thinking)
        chars += sum(len(c.arguments) + len(c.name) for c in message.tool_calls)
    return chars


StepAuthor = Callable[[LLMRequest], ScriptStep]


@dataclass
class _Playlist:
    """A fixed list of steps, played in order; then a note that the script has ended."""

    steps: Sequence[ScriptStep]
    played: int = field(default=0)

    def __call__(self, request: LLMRequest) -> ScriptStep:
        self.played += 1
        if self.played <= len(self.steps):
            return self.steps[self.played - 1]
        return ScriptStep(
            text=f"The script has ended: all {len(self.steps)} steps were played.",
            chunk_delay_s=0.0,
        )


class ScriptedProvider:
    """A provider whose every answer comes from a script (or from a step author function)."""

    name = "scripted"

    def __init__(self, author: StepAuthor, model: str = "scripted") -> None:
        self.model = model
        self._author = author
        self._requests = 0

    @classmethod
    def from_steps(
        cls, steps: Sequence[ScriptStep | Mapping[str, Any]], model: str = "scripted"
    ) -> ScriptedProvider:
        parsed = tuple(
            s if isinstance(s, ScriptStep) else parse_step(dict(s), f"step {n}")
            for n, s in enumerate(steps, 1)
        )
        return cls(_Playlist(parsed), model)

    @classmethod
    def from_file(cls, path: str | Path, model: str = "scripted") -> ScriptedProvider:
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ScriptFormatError(f"cannot read script {path}: {exc}") from exc
        return cls(_Playlist(parse_script(raw)), model)

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        self._requests += 1
        step = self._author(request)
        yield MessageIdReported(message_id=f"scripted-{self._requests}")
        delay, size = step.chunk_delay_s, step.chunk_chars
        for piece in _chunks(step.thinking, size):
            await asyncio.sleep(delay)
            yield ThinkDelta(text=piece)
        for piece in _chunks(step.text, size):
            await asyncio.sleep(delay)
            yield TextDelta(text=piece)
        if step.error is not None:
            yield StreamFailed(error=step.error.model_copy(update={"model": self.model}))
            return
        for index, call in enumerate(step.tool_calls):
            await asyncio.sleep(delay)
            call_id = call.id or f"call_{self._requests}_{index}"
            pieces = _chunks(call.arguments, size) or [""]
            yield ToolCallDelta(index=index, id=call_id, name=call.name, arguments=pieces[0])
            for piece in pieces[1:]:
                yield ToolCallDelta(index=index, arguments=piece)
        output_chars = len(step.text) + len(step.thinking)
        output_chars += sum(len(c.arguments) + len(c.name) for c in step.tool_calls)
        usage = step.usage or TokenUsage(
            input_other=max(_request_chars(request) // 4, 1), output=max(output_chars // 4, 1)
        )
        yield UsageReported(usage=usage)
        default = FinishReason.TOOL_USE if step.tool_calls else FinishReason.END_TURN
        reason = step.finish or default
        yield Finished(finish=Finish(reason=reason, raw=reason.value))

    async def aclose(self) -> None:
        return None
