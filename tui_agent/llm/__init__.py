"""LLM providers over httpx: OpenAI-compatible Chat Completions, the OpenAI Responses API,
Anthropic Messages, and the scripted provider behind the offline demo.

Every provider streams one attempt as `StreamEvent`s and reports failures as values
(`StreamFailed` with a classified `LLMError`). SSE decoding, error classification and request
building are private modules beside the providers.
"""

import sys
from importlib import import_module
from typing import TYPE_CHECKING, Any

# `import httpx` also imports its command-line module, which loads click, rich and pygments
# when they are installed: about 40 ms of a one-shot run's start-up, for a CLI we never call.
# httpx guards that import (it falls back to a stub `httpx.main`), so marking the module absent
# before httpx loads is safe; if httpx is already loaded, nothing changes.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
# ruff: noqa: E402  (the imports below must come after that line)

from tui_agent.llm._factory import make_provider
from tui_agent.llm._settings import Provider, ProviderKind, ProviderSettings

if TYPE_CHECKING:
    from tui_agent.llm._anthropic import AnthropicProvider
    from tui_agent.llm._demo import DemoScript
    from tui_agent.llm._openai import OpenAIProvider
    from tui_agent.llm._openai_responses import ResponsesProvider
    from tui_agent.llm._scripted import ScriptedProvider, ScriptFormatError, ScriptStep

# The providers load on first use (`make_provider` imports only the one it builds), so a run
# never pays for the wire formats it does not speak.
_LAZY = {
    "AnthropicProvider": "tui_agent.llm._anthropic",
    "DemoScript": "tui_agent.llm._demo",
    "OpenAIProvider": "tui_agent.llm._openai",
    "ResponsesProvider": "tui_agent.llm._openai_responses",
    "ScriptFormatError": "tui_agent.llm._scripted",
    "ScriptStep": "tui_agent.llm._scripted",
    "ScriptedProvider": "tui_agent.llm._scripted",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(name)
    return getattr(import_module(module), name)


__all__ = [
    "AnthropicProvider",
    "DemoScript",
    "OpenAIProvider",
    "Provider",
    "ProviderKind",
    "ProviderSettings",
    "ResponsesProvider",
    "ScriptFormatError",
    "ScriptStep",
    "ScriptedProvider",
    "make_provider",
]
