"""OpenAI Responses API (`POST {base}/responses`): request building and stream parsing.

The stream is typed events about output items, each at an `output_index`: `output_item.added`
opens a message, a reasoning item or a function call (server-side tools such as web search are
skipped); `output_text.delta` and `refusal.delta` carry text, `reasoning_summary_text.delta`
(OpenAI) or `reasoning_text.delta` (raw reasoning: OpenRouter, gpt-oss) carry reasoning, and
`function_call_arguments.delta` a call's arguments, split anywhere; `output_item.done` closes an
item whole. The end is `response.completed` or `response.incomplete` (with usage: input
including the cached part, output), `response.failed` or an `error` event; a server that also
sends `[DONE]` (OpenRouter) is understood.

Requests are stateless (`store: false`): the whole conversation is sent each time as input
items: messages, `function_call` and `function_call_output` items, and the reasoning items of
earlier replies with their `encrypted_content` (asked for with
`include: ["reasoning.encrypted_content"]`), so a reasoning model keeps its chain of thought
across tool calls without the server storing anything. A reasoning item becomes a `ThinkPart`
whose `signature` is the item's id and whose `encrypted` is that content: the only part with
both, so neither Anthropic nor this builder ever echoes another provider's reasoning. Function
tools are sent with `strict: false`, since the API's default (strict) would refuse our schemas.
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
    ThinkPart,
    TokenUsage,
    ToolCallDelta,
    UsageReported,
)

_INCOMPLETE = {
    "max_output_tokens": FinishReason.MAX_TOKENS,
    "content_filter": FinishReason.FILTERED,
}
_TEXT, _REASONING = "message", "reasoning"  # items we stream; a function call is its ordinal


def _count(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def responses_usage(usage: dict[str, Any]) -> TokenUsage:
    """input_tokens includes what `input_tokens_details` says was read from the cache
    (`cached_tokens`) or written to it (`cache_write_tokens`, in recent responses)."""
    details = usage.get("input_tokens_details")
    details = details if isinstance(details, dict) else {}
    cached = _count(details.get("cached_tokens"))
    written = _count(details.get("cache_write_tokens"))
    return TokenUsage(
        input_other=max(_count(usage.get("input_tokens")) - cached - written, 0),
        input_cache_read=cached,
        input_cache_creation=written,
        output=_count(usage.get("output_tokens")),
    )


class ResponsesStreamParser:
    """Responses stream events -> stream events, for one attempt."""

    __slots__ = ("_args", "_content", "_ctx", "_done", "_finish", "_items", "_refused", "_tools")

    def __init__(self, ctx: ErrorContext) -> None:
        self._ctx = ctx
        self._done = False
        self._finish: Finish | None = None
        self._content = False
        self._refused = False
        self._items: dict[int, str | int] = {}  # output_index -> _TEXT, _REASONING or ordinal
        self._tools = 0
        self._args: set[int] = set()  # call ordinals whose arguments were streamed

    @property
    def done(self) -> bool:
        return self._done

    @property
    def has_finish(self) -> bool:
        return self._finish is not None

    def feed(self, event: ServerSentEvent) -> list[StreamEvent]:
        if event.data.strip() == "[DONE]":
            self._done = True
            return []
        try:
            payload = json.loads(event.data)
        except ValueError:
            message = f"malformed JSON in a stream event: {event.data[:200]}"
            raise protocol_error(self._ctx, message) from None
        if not isinstance(payload, dict):
            raise protocol_error(self._ctx, f"a stream event is not an object: {event.data[:200]}")
        kind = str(payload.get("type") or event.event or "")
        item = self._items.get(payload.get("output_index", -1))
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            self._refused = self._refused or kind == "response.refusal.delta"
            return [TextDelta(text=payload["delta"])] if payload.get("delta") else []
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return [ThinkDelta(text=payload["delta"])] if payload.get("delta") else []
        if kind == "response.reasoning_summary_part.added" and payload.get("summary_index"):
            return [ThinkDelta(text="\n\n")]  # summary parts are paragraphs of one reasoning
        if kind == "response.function_call_arguments.delta" and isinstance(item, int):
            if not payload.get("delta"):
                return []
            self._args.add(item)
            return [ToolCallDelta(index=item, arguments=payload["delta"])]
        if kind == "response.output_item.added":
            return self._added(payload.get("output_index", -1), payload.get("item") or {})
        if kind == "response.output_item.done":
            return self._item_done(item, payload.get("item") or {})
        if kind == "response.created":
            response = payload.get("response") or {}
            return [MessageIdReported(message_id=str(response["id"]))] if response.get("id") else []
        if kind in ("response.completed", "response.incomplete"):
            return self._end(payload.get("response") or {})
        if kind == "response.failed":
            error = (payload.get("response") or {}).get("error") or payload
            raise StreamFailure(classify_stream_error(self._ctx, error))
        if kind == "error":
            raise StreamFailure(classify_stream_error(self._ctx, payload))
        return []  # lifecycle events, server tools' progress, annotations, later additions

    def _added(self, index: int, item: dict[str, Any]) -> list[StreamEvent]:
        kind = item.get("type")
        if kind == "message":
            self._items[index] = _TEXT
            self._content = True
        elif kind == "reasoning":
            self._items[index] = _REASONING
            self._content = True
        elif kind == "function_call":
            ordinal = self._tools
            self._tools += 1
            self._items[index] = ordinal
            self._content = True
            arguments = str(item.get("arguments") or "")
            if arguments:
                self._args.add(ordinal)
            return [
                ToolCallDelta(
                    index=ordinal,
                    id=item.get("call_id") or None,
                    name=item.get("name") or None,
                    arguments=arguments,
                )
            ]
        return []

    def _item_done(self, item: str | int | None, whole: dict[str, Any]) -> list[StreamEvent]:
        if isinstance(item, int) and item not in self._args:
            # Arguments that came only whole (or not at all) still make a valid JSON object.
            self._args.add(item)
            return [ToolCallDelta(index=item, arguments=str(whole.get("arguments") or "{}"))]
        if item == _REASONING and whole.get("encrypted_content") and whole.get("id"):
            return [
                ThinkDelta(signature=str(whole["id"]), encrypted=str(whole["encrypted_content"]))
            ]
        return []

    def _end(self, response: dict[str, Any]) -> list[StreamEvent]:
        self._done = True
        status = str(response.get("status") or "completed")
        details = response.get("incomplete_details") or {}
        raw = str(details.get("reason") or status) if status == "incomplete" else status
        if status == "incomplete":
            reason = _INCOMPLETE.get(raw, FinishReason.OTHER)
        elif self._tools:
            reason = FinishReason.TOOL_USE
        else:
            reason = FinishReason.REFUSAL if self._refused else FinishReason.END_TURN
        self._finish = Finish(reason=reason, raw=raw)
        usage = response.get("usage")
        return [UsageReported(usage=responses_usage(usage))] if isinstance(usage, dict) else []

    def end(self) -> list[StreamEvent]:
        if self._finish is None and not self._done:
            raise incomplete_stream(self._ctx, "no response.completed")
        if self._finish is None and not self._content:
            raise StreamFailure(
                self._ctx.error(
                    LLMErrorKind.EMPTY_RESPONSE, "the stream ended without any output or status"
                )
            )
        finish = self._finish or Finish(
            reason=FinishReason.TOOL_USE if self._tools else FinishReason.END_TURN, raw=None
        )
        return [Finished(finish=finish)]


def _user_content(message: Message) -> str | list[dict[str, Any]]:
    if not any(isinstance(part, ImagePart) for part in message.content):
        return message.text
    content: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart) and part.text:
            content.append({"type": "input_text", "text": part.text})
        elif isinstance(part, ImagePart):
            url = f"data:{part.media_type};base64,{part.data}"
            content.append({"type": "input_image", "image_url": url})
    return content


def _assistant_items(message: Message) -> list[dict[str, Any]]:
    """Reasoning items and text in the order they came (a reasoning item belongs before the
    item that followed it), then the calls, which always came last."""
    items: list[dict[str, Any]] = []
    text: list[str] = []

    def said() -> None:
        if "".join(text):
            items.append({"role": "assistant", "content": "".join(text)})
        text.clear()

    for part in message.content:
        if isinstance(part, TextPart):
            text.append(part.text)
        elif isinstance(part, ThinkPart) and part.signature and part.encrypted:
            said()
            # No id: with `store: false` the server keeps no item an id could refer to.
            items.append({"type": "reasoning", "summary": [], "encrypted_content": part.encrypted})
    said()
    for call in message.tool_calls:
        items.append(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments or "{}",
            }
        )
    return items


def build_responses_body(request: LLMRequest, settings: ProviderSettings) -> dict[str, Any]:
    """The JSON body for `POST {base}/responses` from a provider-neutral request."""
    items: list[dict[str, Any]] = []
    for message in images_after_tools(request.messages):
        if message.role == "tool":
            output = {"type": "function_call_output", "call_id": message.tool_call_id}
            text = "\n".join(p.text for p in message.content if isinstance(p, TextPart))
            items.append({**output, "output": text})
        elif message.role == "assistant":
            items.extend(_assistant_items(message))
        elif message.role == "system":
            items.append({"role": "system", "content": message.text})
        else:
            items.append({"role": "user", "content": _user_content(message)})
    body: dict[str, Any] = {"model": request.model or settings.model}
    if request.system:
        body["instructions"] = request.system
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
                "strict": False,
            }
            for tool in request.tools
        ]
    body |= {
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "input": items,
    }
    max_tokens = request.max_tokens or settings.max_tokens
    if max_tokens:
        body["max_output_tokens"] = max_tokens
    return with_common_options(body, request, settings)


class ResponsesProvider(HTTPProvider):
    name = "openai-responses"
    default_base_url = ENDPOINTS["openai-responses"].url

    def url(self) -> str:
        return f"{self.base_url}/responses"

    def headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if self.settings.api_key:
            headers["authorization"] = f"Bearer {self.settings.api_key}"
        return headers

    def body(self, request: LLMRequest) -> dict[str, Any]:
        return build_responses_body(request, self.settings)

    def parser(self) -> StreamParser:
        return ResponsesStreamParser(self._ctx)
