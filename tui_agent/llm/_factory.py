"""`make_provider`: settings in, a ready provider out.

Keys and base URLs not given in the settings come from the environment variables that
`providers.ENDPOINTS` names for the kind (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, ...), as the
official SDKs do. A key stays optional for OpenAI-compatible servers: Ollama and local vLLM need
none.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from tui_agent import keys
from tui_agent.llm._settings import Provider, ProviderSettings
from tui_agent.providers import ENDPOINTS

if TYPE_CHECKING:
    import httpx


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
    endpoint = ENDPOINTS[settings.kind]
    settings = dataclasses.replace(
        settings,
        api_key=settings.api_key or keys.lookup(endpoint.key_env),
        base_url=settings.base_url or os.environ.get(endpoint.url_env) or None,
    )
    if settings.kind == "openai":
        from tui_agent.llm._openai import OpenAIProvider

        return OpenAIProvider(settings, client)
    if settings.kind == "openai-responses":
        from tui_agent.llm._openai_responses import ResponsesProvider

        return ResponsesProvider(settings, client)
    from tui_agent.llm._anthropic import AnthropicProvider

    return AnthropicProvider(settings, client)
