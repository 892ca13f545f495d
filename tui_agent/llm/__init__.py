"""LLM providers over httpx: OpenAI-compatible Chat Completions, Anthropic Messages, and the
scripted provider behind the offline demo.

Every provider streams one attempt as `StreamEvent`s and reports failures as values
(`StreamFailed` with a classified `LLMError`). SSE decoding, error classification and request
building are private modules beside the providers.
"""

from tui_agent.llm._anthropic import AnthropicProvider
from tui_agent.llm._demo import DemoScript
from tui_agent.llm._factory import make_provider
from tui_agent.llm._openai import OpenAIProvider
from tui_agent.llm._scripted import ScriptedProvider, ScriptFormatError, ScriptStep
from tui_agent.llm._settings import Provider, ProviderKind, ProviderSettings

__all__ = [
    "AnthropicProvider",
    "DemoScript",
    "OpenAIProvider",
    "Provider",
    "ProviderKind",
    "ProviderSettings",
    "ScriptFormatError",
    "ScriptStep",
    "ScriptedProvider",
    "make_provider",
]
