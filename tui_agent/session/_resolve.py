"""Choosing the provider, model, endpoint and key for a run: flags, then environment, then file.

The order for every setting is: an explicit command-line flag, then the environment
(`TUI_AGENT_MODEL`, the key and base-URL variables `providers.ENDPOINTS` names for the kind,
such as `OPENAI_API_KEY`/`OPENAI_BASE_URL`, or a provider's own `api_key_env`), then
`config.toml`, then the built-in defaults (`providers.DEFAULT_MODELS`, `providers.ENDPOINTS`).
With no key anywhere (and no non-default base URL, which means a local OpenAI-compatible server
that may need none) the result is the built-in scripted demo, with a `notice` saying why. Keys
are read from the environment only (as `keys` holds it: taken out of `os.environ` so tools never
inherit them) and are kept out of `repr`, so a logged `ResolvedModel` shows none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from pathlib import Path

from tui_agent import keys
from tui_agent.lazy_dataclass import dataclass
from tui_agent.providers import DEFAULT_MODELS, ENDPOINTS, ProviderKind
from tui_agent.session._config import BUILTIN_PROVIDERS, Config, ConfigError, ProviderConfig

MODEL_ENV = "TUI_AGENT_MODEL"
# Each key variable once, in the table's order (two kinds may share a key).
_KEY_ENVS = tuple(dict.fromkeys(endpoint.key_env for endpoint in ENDPOINTS.values()))
DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_OUTPUT_TOKENS = 8_192

# (name prefix, context window, max output tokens); the longest matching prefix wins.
KNOWN_MODELS: tuple[tuple[str, int, int], ...] = (
    ("gpt-4.1", 1_047_576, 32_768),
    ("gpt-4o", 128_000, 16_384),
    ("gpt-4-turbo", 128_000, 4_096),
    ("gpt-5", 400_000, 128_000),
    ("o1", 200_000, 100_000),
    ("o3", 200_000, 100_000),
    ("o4-mini", 200_000, 100_000),
    ("claude", 200_000, 8_192),
    ("claude-3-7-sonnet", 200_000, 64_000),
    ("claude-sonnet-4", 200_000, 64_000),
    ("claude-haiku-4", 200_000, 64_000),
    ("claude-opus-4", 200_000, 32_000),
    ("deepseek", 128_000, 8_192),
    ("kimi-k2", 262_144, 32_768),
    ("qwen3-coder", 262_144, 65_536),
    ("gemini-2.5", 1_048_576, 65_536),
)


def _builtin_config(provider: str) -> ProviderConfig | None:
    """The settings of a built-in provider that config.toml does not mention (built on use:
    a model instance at import would build pydantic's schema during start-up; constructed
    without validation, as a built-in provider's name is a valid kind)."""
    if provider not in BUILTIN_PROVIDERS:
        return None
    kind: ProviderKind = provider  # type: ignore[assignment]
    return ProviderConfig.model_construct(kind=kind)


@dataclass(frozen=True)
class ResolvedModel:
    provider_kind: ProviderKind
    model: str  # the id sent to the provider
    base_url: str | None
    api_key: str | None = field(repr=False)
    context_window: int
    max_output_tokens: int
    echo_reasoning: bool = False
    demo: bool = False  # the built-in scripted demo, because nothing else is configured
    provider: str = ""  # the provider's name in config.toml (or the built-in name)
    script: Path | None = None
    notice: str | None = None  # why the demo runs, for the user


def resolve(
    config: Config,
    *,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    script: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> ResolvedModel:
    """Raises `ConfigError` for a `provider` that is neither configured nor built in."""
    env = keys.environ() if environ is None else environ
    if script is not None:
        return _scripted(Path(script))
    name = model or env.get(MODEL_ENV) or None
    if provider is None:
        name = name or config.default_model
        if name is not None:
            provider = provider_for_model(config, name)
        else:
            provider = _first_available(config, env, base_url)
            if provider is None:
                return _demo(
                    f"No API key found (set {' or '.join(_KEY_ENVS)}, or configure "
                    "a provider in config.toml): running the built-in scripted demo."
                )
    settings = config.providers.get(provider) or _builtin_config(provider)
    if settings is None:
        known = sorted({*config.providers, *BUILTIN_PROVIDERS})
        raise ConfigError(
            f"unknown provider {provider!r}: use one of {', '.join(known)}", key="provider"
        )
    kind = settings.kind
    if kind == "scripted":
        return _demo(None)
    if name is None:
        default = config.default_model
        fits = default is not None and provider_for_model(config, default) == provider
        name = default if fits and default is not None else DEFAULT_MODELS[kind]
    url = base_url or _env_base_url(provider, settings, env) or settings.base_url
    url = url or ENDPOINTS[kind].url
    key_env = settings.api_key_env or ENDPOINTS[kind].key_env
    key = env.get(key_env) or None
    openai_wire = kind in ("openai", "openai-responses")
    local = openai_wire and url.rstrip("/") != ENDPOINTS[kind].url
    if key is None and not local:
        return _demo(f"{key_env} is not set: running the built-in scripted demo.")
    entry = config.models.get(name)
    model_id = (entry.model if entry else None) or name
    window, max_output = known_limits(model_id)
    return ResolvedModel(
        provider_kind=kind,
        provider=provider,
        model=model_id,
        base_url=url,
        api_key=key,
        context_window=(entry.context_window if entry else None) or window,
        max_output_tokens=(entry.max_output_tokens if entry else None) or max_output,
        echo_reasoning=bool(entry and entry.echo_reasoning),
    )


def provider_for_model(config: Config, name: str) -> str:
    """The configured provider of a model, else a guess from its name."""
    entry = config.models.get(name)
    if entry is not None and entry.provider is not None:
        return entry.provider
    return (
        "anthropic"
        if _bare(entry.model if entry and entry.model else name).startswith("claude")
        else "openai"
    )


def known_limits(model: str) -> tuple[int, int]:
    """(context window, max output tokens) for a model id, from its longest known prefix."""
    bare = _bare(model)
    best: tuple[str, int, int] | None = None
    for prefix, window, output in KNOWN_MODELS:
        if bare.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, window, output)
    if best is None:
        return DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_OUTPUT_TOKENS
    return best[1], best[2]


def _bare(model: str) -> str:
    """`openrouter/anthropic/claude-x` and `Claude-X` both name `claude-x`."""
    return model.rsplit("/", 1)[-1].lower()


def _env_base_url(provider: str, settings: ProviderConfig, env: Mapping[str, str]) -> str | None:
    # The SDK variables configure the official providers; a provider of your own that names
    # its base URL in config.toml is not redirected by them.
    if settings.kind == "scripted" or (provider not in BUILTIN_PROVIDERS and settings.base_url):
        return None
    return env.get(ENDPOINTS[settings.kind].url_env) or None


def _first_available(config: Config, env: Mapping[str, str], base_url: str | None) -> str | None:
    """With no model named anywhere: the first provider that has a key (or a local server)."""
    openai = ENDPOINTS["openai"]
    if base_url or env.get(openai.key_env) or env.get(openai.url_env):
        return "openai"
    if env.get(ENDPOINTS["anthropic"].key_env):
        return "anthropic"
    for name, settings in config.providers.items():
        if settings.kind == "scripted":
            continue
        if settings.api_key_env and env.get(settings.api_key_env):
            return name
        if settings.kind in ("openai", "openai-responses") and settings.base_url:
            return name
    return None


def _scripted(script: Path) -> ResolvedModel:
    return ResolvedModel(
        provider_kind="scripted",
        provider="scripted",
        model=DEFAULT_MODELS["scripted"],
        base_url=None,
        api_key=None,
        context_window=DEFAULT_CONTEXT_WINDOW,
        max_output_tokens=DEFAULT_MAX_OUTPUT_TOKENS,
        script=script,
    )


def _demo(notice: str | None) -> ResolvedModel:
    return ResolvedModel(
        provider_kind="scripted",
        provider="scripted",
        model=DEFAULT_MODELS["scripted"],
        base_url=None,
        api_key=None,
        context_window=DEFAULT_CONTEXT_WINDOW,
        max_output_tokens=DEFAULT_MAX_OUTPUT_TOKENS,
        demo=True,
        notice=notice,
    )
