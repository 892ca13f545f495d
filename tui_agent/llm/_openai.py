"""OpenAI-compatible Chat Completions: request building and stream parsing.

One parser serves OpenAI and the servers that copy its wire format, each with its quirks:
a first chunk with empty `choices` (Azure), reasoning as `reasoning_content` (DeepSeek, GLM,
xAI) or `reasoning` (vLLM, Groq, OpenRouter, whose `reasoning_details` also carry a
signature), `content` sent as an array of typed parts (Mistral's thinking), tool calls by
`index` with arguments over any number of deltas or whole in one, continuation deltas that
repeat an empty `id` (Qwen), usage in its own chunk, inside the finish chunk, or under
`x_groq`, `n` choices (only choice 0 is ours), refusals (streamed as text, finish `refusal`),
errors as `event: error` or as an `error` object in a chunk, and a stream that ends without
`[DONE]` or without any finish reason (but not without both: that stream stopped mid-answer,
an `incomplete` error that is retried). A provider that says `stop` after streaming tool
calls is believed about the calls: the finish becomes `tool_use`, the raw value stays.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

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
from tui_agent.llm._tool_images import images_after_tools
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
    TokenUsage,
    ToolCallDelta,
    UsageReported,
)

_OPENAI_HOST = urlsplit(ENDPOINTS["openai"].url).hostname

_FINISH = {
    "stop": FinishReason.END_TURN,
    "tool_calls": FinishReason.TOOL_USE,
    "function_call": FinishReason.TOOL_USE,
    "length": FinishReason.MAX_TOKENS,
    "content_filter": FinishReason.FILTERED,
}


def _count(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def openai_usage(usage: dict[str, Any]) -> TokenUsage:
    """prompt_tokens minus cached -> input_other; cached -> input_cache_read."""
    details = usage.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    # DeepSeek reports its cache hits under its own name.
    cached = cached or _count(usage.get("prompt_cache_hit_tokens"))
    prompt = _count(usage.get("prompt_tokens"))
    return TokenUsage(
        input_other=max(prompt - cached, 0),
        input_cache_read=cached,
        output=_count(usage.get("completion_tokens")),
    )


class OpenAIStreamParser:
    """Chat Completions chunks -> stream events, for one attempt."""

    __slots__ = (
        "_by_index",
        "_content",
        "_ctx",
        "_done",
        "_finish_raw",
        "_ids",
        "_last_call",
        "_message_id",
        "_refused",
    )

    def __init__(self, ctx: ErrorContext) -> None:
        self._ctx = ctx
        self._done = False
        self._finish_raw: str | None = None
        self._content = False
        self._refused = False
        self._message_id = False
        self._by_index: dict[int, int] = {}  # the provider's tool-call index -> our ordinal
        self._ids: dict[int, str | None] = {}  # our ordinal -> the call's id
        self._last_call: int | None = None

    @property
    def done(self) -> bool:
        return self._done

    @property
    def has_finish(self) -> bool:
        return self._finish_raw is not None

    def feed(self, event: ServerSentEvent) -> list[StreamEvent]:
        data = event.data
        if data.startswith("[DONE]"):
            self._done = True
            return []
        try:
            chunk = json.loads(data)
        except ValueError:
            if event.event == "error":  # an error event in plain words is still the provider's
                raise StreamFailure(classify_stream_error(self._ctx, {"error": data})) from None
            message = f"malformed JSON in a stream chunk: {data[:200]}"
            raise protocol_error(self._ctx, message) from None
        if event.event == "error":
            raise StreamFailure(classify_stream_error(self._ctx, chunk))
        if not isinstance(chunk, dict):
            raise protocol_error(self._ctx, f"a stream chunk is not an object: {data[:200]}")
        if chunk.get("error"):
            raise StreamFailure(classify_stream_error(self._ctx, chunk))
        out: list[StreamEvent] = []
        if not self._message_id:
            message_id = chunk.get("id")
            if message_id and isinstance(message_id, str):
                self._message_id = True
                out.append(MessageIdReported(message_id=message_id))
        choices = chunk.get("choices")
        if choices:
            for choice in choices:
                if choice.get("index", 0) == 0:
                    self._choice(choice, out)
        usage = chunk.get("usage")
        if not usage:
            extra = chunk.get("x_groq")
            usage = extra.get("usage") if isinstance(extra, dict) else None
        if isinstance(usage, dict):
            out.append(UsageReported(usage=openai_usage(usage)))
        return out

    def _choice(self, choice: dict[str, Any], out: list[StreamEvent]) -> None:
        delta = choice.get("delta")
        if delta:
            # Reasoning first: a delta carrying both belongs to the turn from thinking to text.
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning and isinstance(reasoning, str):
                self._content = True
                out.append(ThinkDelta(text=reasoning))
            details = delta.get("reasoning_details")
            if details and isinstance(details, list):
                for detail in details:
                    if isinstance(detail, dict) and detail.get("signature"):
                        out.append(ThinkDelta(signature=str(detail["signature"])))
            content = delta.get("content")
            if content:
                if isinstance(content, str):
                    self._content = True
                    out.append(TextDelta(text=content))
                elif isinstance(content, list):
                    self._content_parts(content, out)
            refusal = delta.get("refusal")
            if refusal and isinstance(refusal, str):
                self._content = self._refused = True
                out.append(TextDelta(text=refusal))
            tool_calls = delta.get("tool_calls")
            if tool_calls:
                for position, call in enumerate(tool_calls):
                    self._tool_call(position, call, out)
        finish = choice.get("finish_reason")
        if finish:
            self._finish_raw = str(finish)

    def _content_parts(self, parts: list[Any], out: list[StreamEvent]) -> None:
        for part in parts:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and part.get("text"):
                self._content = True
                out.append(TextDelta(text=str(part["text"])))
            elif kind == "thinking":
                thinking = part.get("thinking")
                if isinstance(thinking, list):
                    text = "".join(str(p.get("text", "")) for p in thinking if isinstance(p, dict))
                else:
                    text = str(thinking or "")
                if text:
                    self._content = True
                    out.append(ThinkDelta(text=text))

    def _tool_call(self, position: int, call: dict[str, Any], out: list[StreamEvent]) -> None:
        index = call.get("index")
        call_id = call.get("id") or None  # Qwen repeats "id": "" on every continuation
        function = call.get("function") or {}
        arguments = function.get("arguments") or ""
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        if index is None:
            # No index (some compatible servers): an id starts a call, no id continues the last.
            ordinal = self._last_call if call_id is None else None
        else:
            ordinal = self._by_index.get(index)
        if ordinal is not None and self._ids[ordinal] not in (None, call_id) and call_id:
            ordinal = None  # a new id under an index already used: servers that reuse index 0
        if ordinal is None:
            ordinal = len(self._ids)
            self._ids[ordinal] = call_id
            if index is not None:
                self._by_index[index] = ordinal
            self._last_call = ordinal
            self._content = True
            out.append(
                ToolCallDelta(
                    index=ordinal,
                    id=call_id,
                    name=function.get("name") or None,
                    arguments=arguments,
                )
            )
            return
        self._last_call = ordinal
        if arguments:
            out.append(ToolCallDelta(index=ordinal, arguments=arguments))

    def end(self) -> list[StreamEvent]:
        raw = self._finish_raw
        if raw is None and not self._done:
            raise incomplete_stream(self._ctx, "no finish reason and no [DONE]")
        if raw is None and not self._content:
            raise StreamFailure(
                self._ctx.error(
                    LLMErrorKind.EMPTY_RESPONSE,
                    "the stream ended without any content or finish reason",
                )
            )
        reason = FinishReason.END_TURN if raw is None else _FINISH.get(raw, FinishReason.OTHER)
        if reason is FinishReason.END_TURN:
            if self._ids:
                reason = FinishReason.TOOL_USE
            elif self._refused:
                reason = FinishReason.REFUSAL
        return [Finished(finish=Finish(reason=reason, raw=raw))]


def _image_url(part: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{part.media_type};base64,{part.data}"}}


def _user_content(message: Message) -> str | list[dict[str, Any]]:
    if not any(isinstance(p, ImagePart) for p in message.content):
        return message.text
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            parts.append(_image_url(part))
    return parts


def _wire_message(message: Message, echo_reasoning: bool) -> dict[str, Any]:
    if message.role == "tool":
        text = "\n".join(p.text for p in message.content if isinstance(p, TextPart))
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": text}
    if message.role == "assistant":
        wire: dict[str, Any] = {"role": "assistant", "content": message.text or None}
        if message.tool_calls:
            wire["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments or "{}"},
                }
                for call in message.tool_calls
            ]
        elif wire["content"] is None:
            wire["content"] = ""
        if echo_reasoning and message.thinking:
            wire["reasoning_content"] = message.thinking
        return wire
    if message.role == "system":
        return {"role": "system", "content": message.text}
    return {"role": "user", "content": _user_content(message)}


def build_openai_body(request: LLMRequest, settings: ProviderSettings) -> dict[str, Any]:
    """The JSON body for `POST {base}/chat/completions` from a provider-neutral request."""
    echo = request.echo_reasoning or settings.echo_reasoning
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.extend(_wire_message(m, echo) for m in images_after_tools(request.messages))
    body: dict[str, Any] = {
        "model": request.model or settings.model,
        "messages": messages,
        "stream": True,
    }
    if settings.include_usage:
        body["stream_options"] = {"include_usage": True}
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            }
            for tool in request.tools
        ]
    max_tokens = request.max_tokens or settings.max_tokens
    if max_tokens:
        # OpenAI's own API refuses `max_tokens` for its reasoning models and takes the newer
        # name for all; compatible servers (vLLM, Ollama, DeepSeek, ...) know `max_tokens`.
        host = urlsplit(settings.base_url).hostname if settings.base_url else _OPENAI_HOST
        body["max_completion_tokens" if host == _OPENAI_HOST else "max_tokens"] = max_tokens
    return with_common_options(body, request, settings)


class OpenAIProvider(HTTPProvider):
    name = "openai"
    default_base_url = ENDPOINTS["openai"].url

    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if self.settings.api_key:
            headers["authorization"] = f"Bearer {self.settings.api_key}"
        return headers

    def body(self, request: LLMRequest) -> dict[str, Any]:
        return build_openai_body(request, self.settings)

    def parser(self) -> StreamParser:
        return OpenAIStreamParser(self._ctx)
