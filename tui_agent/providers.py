"""The provider kinds and each kind's facts: default model, endpoint, and the environment
variables that hold its key and override its URL. The one owner of these facts: the factory and
the providers (`llm`), the session's resolution and config, and the `--provider` choices of the
command line and of `tui-agent acp` all read them here.

A module of its own, outside `llm`, because the command line builds its parser before the app
draws its first frame, and that frame must not wait for the provider stack to load."""

from __future__ import annotations

from typing import Literal, get_args

from tui_agent.lazy_dataclass import dataclass

ProviderKind = Literal["openai", "openai-responses", "anthropic", "scripted"]
PROVIDER_KINDS: tuple[ProviderKind, ...] = get_args(ProviderKind)


@dataclass(frozen=True)
class Endpoint:
    """Where a provider kind that speaks HTTP is reached when nothing names another endpoint,
    and the environment variables that hold its key and override its URL (as the official
    SDKs read them). `keys.PROVIDER_KEY_ENVS` lists the key names again, because it runs
    before anything is imported; a test holds the two together."""

    url: str
    key_env: str
    url_env: str


DEFAULT_MODELS: dict[ProviderKind, str] = {
    "openai": "gpt-4.1",
    "openai-responses": "gpt-5",
    "anthropic": "claude-sonnet-4-5",
    "scripted": "scripted",
}
ENDPOINTS: dict[ProviderKind, Endpoint] = {
    "openai": Endpoint("https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "openai-responses": Endpoint("https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "anthropic": Endpoint("https://api.anthropic.com", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
}
