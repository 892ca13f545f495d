"""Anthropic Messages: request building and stream parsing.

The stream is typed events: `message_start` (id, input usage), `content_block_start` /
`_delta` / `_stop` per block (text, thinking with `signature_delta`, redacted thinking whose
opaque `data` is echoed back whole, tool_use with `input_json_delta` split anywhere),
`message_delta` (stop reason, output usage), `message_stop`, `ping`, and `error`. Blocks we do
not model (server tools, their results, citations) are skipped by index. Tool calls are
numbered by their own order, not by block index, so a text block before them shifts nothing.

Requests put the system prompt in `system`, merge consecutive tool results (and any user text
after them) into one user message of `tool_result` blocks with `is_error`, echo thinking
blocks with their signatures (a thinking part without one came from another provider and is
dropped: Anthropic rejects it), and always send `max_tokens` (8192 unless set).

Prompt caching (unless `prompt_cache` is off) marks up to four `cache_control` breakpoints, the
provider's limit: the last tool (the tool table survives a change of system prompt, as plan mode
makes), the system prompt, the end of the previous step's request and the end of this one. The
cache is read by an exact prefix up to a breakpoint, so step N+1 marks the very block step N
wrote its cache at (the message before the last assistant reply), whatever number of blocks the
reply and its tool results added since: the provider's lookback for an unmarked hit is bounded.
"""

from __future__ import annotations

import json
from typing import Any

from tui_agent.llm._errors import (
    ErrorContext,
    StreamFailure,
    classify_stream_error,
    incomplete_stream,
    protocol_error,
)
from tui_agent.llm._http_provider import HTTPProvider, StreamParser, with_common_options
from tui_agent.llm._settings import ProviderSettings
from tui_agent.llm._sse import ServerSentEvent
from tui_agent.providers import ENDPOINTS
from tui_agent.vocab import (
    Finish,
    Finished,
    FinishReason,
    ImagePart,
    LLMErrorKind,
    LLMRequest,
    Message,
    MessageIdReported,
    StreamEvent,
    TextDelta,
    TextPart,
    ThinkDelta,
    ThinkPart,
    TokenUsage,
    ToolCallDelta,
    UsageReported,
)

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192

_FINISH = {
    "end_turn": FinishReason.END_TURN,
    "tool_use": FinishReason.TOOL_USE,
    "max_tokens": FinishReason.MAX_TOKENS,
    "model_context_window_exceeded": FinishReason.MAX_TOKENS,
    "stop_sequence": FinishReason.STOP_SEQUENCE,
    "refusal": FinishReason.REFUSAL,
}

_TEXT, _THINKING = "text", "thinking"  # block kinds we stream; a tool block is its ordinal


def _count(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def anthropic_usage(usage: dict[str, Any]) -> TokenUsage:
    return TokenUsage(
        input_other=_count(usage.get("input_tokens")),
        input_cache_read=_count(usage.get("cache_read_input_tokens")),
        input_cache_creation=_count(usage.get("cache_creation_input_tokens")),
        output=_count(usage.get("output_tokens")),
    )


class AnthropicStreamParser:
    """Messages stream events -> stream events, for one attempt."""

    __slots__ = ("_blocks", "_content", "_ctx", "_done", "_stop_reason", "_tool_args", "_tools")

    def __init__(self, ctx: ErrorContext) -> None:
        self._ctx = ctx
        self._done = False
        self._stop_reason: str | None = None
        self._content = False
        self._blocks: dict[int, str | int] = {}  # block index -> _TEXT, _THINKING or tool ordinal
        self._tools = 0
        self._tool_args: set[int] = set()  # tool ordinals that received argument text

    @property
    def done(self) -> bool:
        return self._done

    @property
    def has_finish(self) -> bool:
        return self._stop_reason is not None

    def feed(self, event: ServerSentEvent) -> list[StreamEvent]:
        try:
            payload = json.loads(event.data)
        except ValueError:
            message = f"malformed JSON in a stream event: {event.data[:200]}"
            raise protocol_error(self._ctx, message) from None
        if not isinstance(payload, dict):
            raise protocol_error(self._ctx, f"a stream event is not an object: {event.data[:200]}")
        kind = payload.get("type") or event.event
        if kind == "content_block_delta":
            return self._delta(payload)
        if kind == "content_block_start":
            return self._start(payload)
        if kind == "content_block_stop":
            block = self._blocks.get(payload.get("index", -1))
            if isinstance(block, int) and block not in self._tool_args:
                # A call without arguments still needs valid JSON arguments: an empty object.
                self._tool_args.add(block)
                return [ToolCallDelta(index=block, arguments="{}")]
            return []
        if kind == "message_start":
            return self._message_start(payload)
        if kind == "message_delta":
            out: list[StreamEvent] = []
            delta = payload.get("delta") or {}
            if delta.get("stop_reason"):
                self._stop_reason = str(delta["stop_reason"])
            usage = payload.get("usage")
            if isinstance(usage, dict):
                out.append(UsageReported(usage=anthropic_usage(usage)))
            return out
        if kind == "message_stop":
            self._done = True
            return []
        if kind == "error":
            raise StreamFailure(classify_stream_error(self._ctx, payload))
        return []  # ping and event types added after this was written

    def _message_start(self, payload: dict[str, Any]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        message = payload.get("message") or {}
        if message.get("id"):
            out.append(MessageIdReported(message_id=str(message["id"])))
        usage = message.get("usage")
        if isinstance(usage, dict):
            out.append(UsageReported(usage=anthropic_usage(usage)))
        return out

    def _start(self, payload: dict[str, Any]) -> list[StreamEvent]:
        index = payload.get("index", -1)
        block = payload.get("content_block") or {}
        kind = block.get("type")
        if kind == "text":
            self._blocks[index] = _TEXT
            self._content = True
            return [TextDelta(text=block["text"])] if block.get("text") else []
        if kind == "thinking":
            self._blocks[index] = _THINKING
            self._content = True
            out: list[StreamEvent] = []
            if block.get("thinking"):
                out.append(ThinkDelta(text=block["thinking"]))
            if block.get("signature"):
                out.append(ThinkDelta(signature=block["signature"]))
            return out
        if kind == "redacted_thinking":
            self._content = True
            return [ThinkDelta(encrypted=str(block.get("data", "")))]
        if kind == "tool_use":
            ordinal = self._tools
            self._tools += 1
            self._blocks[index] = ordinal
            self._content = True
            given = block.get("input")
            arguments = json.dumps(given, ensure_ascii=False) if given else ""
            if arguments:
                self._tool_args.add(ordinal)
            return [
                ToolCallDelta(
                    index=ordinal,
                    id=block.get("id") or None,
                    name=block.get("name") or None,
                    arguments=arguments,
                )
            ]
        return []

    def _delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        delta = payload.get("delta") or {}
        kind = delta.get("type")
        block = self._blocks.get(payload.get("index", -1))
        if block is None:
            return []
        if kind == "text_delta":
            return [TextDelta(text=delta["text"])] if delta.get("text") else []
        if kind == "thinking_delta":
            return [ThinkDelta(text=delta["thinking"])] if delta.get("thinking") else []
        if kind == "signature_delta":
            return [ThinkDelta(signature=delta["signature"])] if delta.get("signature") else []
        if kind == "input_json_delta" and isinstance(block, int):
            partial = delta.get("partial_json") or ""
            if not partial:
                return []
            self._tool_args.add(block)
            return [ToolCallDelta(index=block, arguments=partial)]
        return []

    def end(self) -> list[StreamEvent]:
        raw = self._stop_reason
        if raw is None and not self._done:
            raise incomplete_stream(self._ctx, "no stop reason and no message_stop")
        if raw is None and not self._content:
            raise StreamFailure(
                self._ctx.error(
                    LLMErrorKind.EMPTY_RESPONSE,
                    "the stream ended without any content or stop reason",
                )
            )
        if raw is None:
            reason = FinishReason.TOOL_USE if self._tools else FinishReason.END_TURN
        else:
            reason = _FINISH.get(raw, FinishReason.OTHER)
        return [Finished(finish=Finish(reason=reason, raw=raw))]


def _tool_input(arguments: str) -> Any:
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        # A truncated call (max_tokens mid-arguments) still has to round-trip as an object.
        return {}
    return value if isinstance(value, dict) else {}


def _user_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart) and part.text:
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            blocks.append(
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": part.media_type, "data": part.data},
                }
            )
    return blocks


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        # A part with both a signature and encrypted content is an OpenAI reasoning item.
        if isinstance(part, ThinkPart) and not (part.signature and part.encrypted):
            if part.encrypted:
                blocks.append({"type": "redacted_thinking", "data": part.encrypted})
            elif part.signature:
                blocks.append(
                    {"type": "thinking", "thinking": part.think, "signature": part.signature}
                )
        elif isinstance(part, TextPart) and part.text:
            blocks.append({"type": "text", "text": part.text})
    for call in message.tool_calls:
        arguments = _tool_input(call.arguments)
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments})
    return blocks


def _tool_result(message: Message) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    if any(isinstance(part, ImagePart) for part in message.content):
        block["content"] = _user_blocks(message)  # text and images, each its own block
    elif message.text:  # an empty result goes without content: Anthropic refuses empty text
        block["content"] = "\n".join(p.text for p in message.content if isinstance(p, TextPart))
    if message.is_error:
        block["is_error"] = True
    return block


def build_anthropic_body(request: LLMRequest, settings: ProviderSettings) -> dict[str, Any]:
    """The JSON body for `POST {base}/v1/messages` from a provider-neutral request."""
    system = [request.system] if request.system else []
    messages: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role == "system":
            if not messages:
                system.append(message.text)
                continue
            # A system note in mid-history cannot move to `system` without reordering the
            # conversation; it reaches the model as user text where it happened.
            role, blocks = "user", [{"type": "text", "text": message.text}]
        elif message.role == "tool":
            role, blocks = "user", [_tool_result(message)]
        elif message.role == "assistant":
            role, blocks = "assistant", _assistant_blocks(message)
        else:
            role, blocks = "user", _user_blocks(message)
        if not blocks:
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)  # Anthropic wants roles to alternate
        else:
            messages.append({"role": role, "content": blocks})
    body: dict[str, Any] = {
        "model": request.model or settings.model,
        "max_tokens": request.max_tokens or settings.max_tokens or DEFAULT_MAX_TOKENS,
        "stream": True,
        "messages": messages,
    }
    if system:
        body["system"] = "\n\n".join(system)
    if request.tools:
        body["tools"] = [
            {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
            for tool in request.tools
        ]
    if settings.prompt_cache:
        mark_cache_breakpoints(body)
    return with_common_options(body, request, settings)


_CACHE_CONTROL = {"type": "ephemeral"}
_UNMARKABLE = ("thinking", "redacted_thinking")  # the provider refuses cache_control on these


def mark_cache_breakpoints(body: dict[str, Any]) -> None:
    """Put `cache_control` on the last tool, the system prompt, the previous step's last
    message and the last message (see the module's docstring), in place: four at most."""
    marked: list[dict[str, Any]] = []
    if body.get("tools"):
        marked.append(body["tools"][-1])
    if body.get("system"):
        block = {"type": "text", "text": body["system"]}
        body["system"] = [block]  # only a block can carry cache_control, not a plain string
        marked.append(block)
    messages: list[dict[str, Any]] = body["messages"]
    replies = [i for i, message in enumerate(messages) if message["role"] == "assistant"]
    ends = [len(messages) - 1] if messages else []
    if replies and replies[-1] > 0:
        ends.insert(0, replies[-1] - 1)  # where the previous step's request ended
    for index in ends:
        marked.append(messages[index]["content"][-1])
    for block in marked:
        if block.get("type") not in _UNMARKABLE:
            block["cache_control"] = dict(_CACHE_CONTROL)


class AnthropicProvider(HTTPProvider):
    name = "anthropic"
    default_base_url = ENDPOINTS["anthropic"].url

    def url(self) -> str:
        return f"{self.base_url}/v1/messages"

    def headers(self) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "anthropic-version": ANTHROPIC_VERSION,
        }
        if self.settings.api_key:
            headers["x-api-key"] = self.settings.api_key
        return headers

    def body(self, request: LLMRequest) -> dict[str, Any]:
        return build_anthropic_body(request, self.settings)

    def parser(self) -> StreamParser:
        return AnthropicStreamParser(self._ctx)
