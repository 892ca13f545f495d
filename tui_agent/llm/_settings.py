"""The provider contract: the `Provider` protocol and the settings a provider is built from.

The provider kinds and their facts (default model, endpoint, environment variables) are owned
by `tui_agent.providers`, which the command line reads before it loads this package."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import field
from typing import Protocol

from tui_agent.lazy_dataclass import dataclass
from tui_agent.providers import ProviderKind as ProviderKind  # re-exported for llm users
from tui_agent.vocab import LLMRequest, StreamEvent


class Provider(Protocol):
    """Streams one LLM attempt. Failures are yielded as `StreamFailed`, never raised."""

    name: str
    model: str

    def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class ProviderSettings:
    kind: ProviderKind
    model: str
    base_url: str | None = None
    # Kept out of repr so a logged or printed settings object never shows the key.
    api_key: str | None = field(default=None, repr=False)
    connect_timeout_s: float = 10.0
    idle_timeout_s: float = 120.0
    include_usage: bool = True  # openai: send stream_options.include_usage
    echo_reasoning: bool = False  # openai: send reasoning back on assistant messages
    max_tokens: int | None = None
    prompt_cache: bool = True  # anthropic: mark cache_control breakpoints (config `prompt_cache`)
    temperature: float | None = None
    script_path: str | None = None  # scripted: a JSON script; None = the built-in demo
    workspace: str | None = None  # scripted demo: the folder it walks through
