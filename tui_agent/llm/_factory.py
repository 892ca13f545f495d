"""`make_provider`: settings in, a ready provider out.

Keys and base URLs not given in the settings come from the environment (`OPENAI_API_KEY`,
`OPENAI_BASE_URL`, also for the Responses API, `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`), as
the official SDKs do. A key stays optional for OpenAI-compatible servers: Ollama and local vLLM
need none.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from tui_agent import keys
from tui_agent.llm._settings import Provider, ProviderSettings

if TYPE_CHECKING:
    import httpx

_ENV = {
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "openai-responses": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
}


def make_provider(settings: ProviderSettings, client: httpx.AsyncClient | None = None) -> Provider:
    """Build the provider the settings describe; a given client is borrowed, never closed.

    Raises `ScriptFormatError` (a `ValueError`) for an unreadable script file: that is a
    configuration problem for the caller, not a stream failure.
    """
    # Each provider is imported here, when it is built: a run loads only the one it uses.
    if settings.kind == "scripted":
        from tui_agent.llm._scripted import ScriptedProvider

        if settings.script_path is not None:
            return ScriptedProvider.from_file(settings.script_path, model=settings.model)
        from tui_agent.llm._demo import DemoScript

        return ScriptedProvider(DemoScript(settings.workspace), model=settings.model)
    key_name, url_name = _ENV[settings.kind]
    settings = dataclasses.replace(
        settings,
        api_key=settings.api_key or keys.lookup(key_name),
        base_url=settings.base_url or os.environ.get(url_name) or None,
    )
    if settings.kind == "openai":
        from tui_agent.llm._openai import OpenAIProvider

        return OpenAIProvider(settings, client)
    if settings.kind == "openai-responses":
        from tui_agent.llm._openai_responses import ResponsesProvider

        return ResponsesProvider(settings, client)
    from tui_agent.llm._anthropic import AnthropicProvider

    return AnthropicProvider(settings, client)
