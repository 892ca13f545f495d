"""Shared test helpers: fold a provider's stream into one outcome, locate the fixtures."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.llm.server import LocalServer
from tui_agent.llm import ProviderSettings, make_provider
from tui_agent.vocab import (
    Finish,
    Finished,
    LLMError,
    LLMRequest,
    MessageIdReported,
    StreamEvent,
    StreamFailed,
    TextDelta,
    ThinkDelta,
    TokenUsage,
    ToolCallDelta,
    UsageReported,
    user_message,
)

HANG_GUARD_S = 20.0  # turns a hang into a clear failure; no assertion is about speed
SSE_HEADERS = {"content-type": "text/event-stream"}


def fixtures_root() -> Path:
    """The recorded provider bodies, kept inside the repository so that a clone anywhere runs
    the tests; INDEX.md there says where each recording comes from."""
    return Path(__file__).resolve().parent / "fixtures" / "providers"


def fixture(name: str) -> tuple[bytes, dict[str, Any]]:
    """A recorded body and its sidecar metadata; `name` is `<dir>/<file>` without suffix."""
    root = fixtures_root()
    meta = json.loads((root / f"{name}.meta.json").read_text())
    body = (root / Path(name).parent / meta["file"]).read_bytes()
    return body, meta


@dataclass
class Outcome:
    """Everything one attempt said, folded the way a consumer would."""

    events: list[StreamEvent] = field(default_factory=list)
    text: str = ""
    thinking: str = ""
    signatures: list[str] = field(default_factory=list)
    encrypted: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, str | None]] = field(default_factory=dict)
    usage: TokenUsage | None = None
    message_id: str | None = None
    finish: Finish | None = None
    error: LLMError | None = None

    @property
    def tool_calls(self) -> list[tuple[str | None, str | None, str]]:
        return [(c["id"], c["name"], c["arguments"] or "") for _, c in sorted(self.calls.items())]


async def collect(stream: AsyncIterator[StreamEvent]) -> Outcome:
    out = Outcome()
    async for event in stream:
        assert out.finish is None and out.error is None, "an event after the end"
        out.events.append(event)
        if isinstance(event, TextDelta):
            out.text += event.text
        elif isinstance(event, ThinkDelta):
            out.thinking += event.text
            if event.signature:
                out.signatures.append(event.signature)
            if event.encrypted:
                out.encrypted.append(event.encrypted)
        elif isinstance(event, ToolCallDelta):
            call = out.calls.get(event.index)
            if call is None:
                out.calls[event.index] = {
                    "id": event.id,
                    "name": event.name,
                    "arguments": event.arguments,
                }
            else:
                assert event.id is None, "only the first delta of a call carries its id"
                call["arguments"] = (call["arguments"] or "") + event.arguments
        elif isinstance(event, UsageReported):
            out.usage = event.usage if out.usage is None else out.usage.merge(event.usage)
        elif isinstance(event, MessageIdReported):
            out.message_id = event.message_id
        elif isinstance(event, Finished):
            out.finish = event.finish
        elif isinstance(event, StreamFailed):
            out.error = event.error
    assert (out.finish is None) != (out.error is None), "exactly one Finished or StreamFailed"
    return out


def openai_chunk(content: str | None = None, finish: str | None = None) -> bytes:
    """One Chat Completions chunk for choice 0, as an SSE event."""
    delta = {} if content is None else {"content": content}
    chunk = {"id": "c1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


def settings_for(server: LocalServer, kind: str = "openai", **extra: Any) -> ProviderSettings:
    base = f"{server.url}/v1" if kind == "openai" else server.url
    return ProviderSettings(kind=kind, model="m", base_url=base, **extra)  # type: ignore[arg-type]


async def run_once(settings: ProviderSettings) -> Outcome:
    """One request through a fresh provider, folded; a hang fails after HANG_GUARD_S."""
    provider = make_provider(settings)
    request = LLMRequest(model="m", messages=(user_message("hi"),))
    try:
        return await asyncio.wait_for(collect(provider.stream(request)), HANG_GUARD_S)
    finally:
        await provider.aclose()
