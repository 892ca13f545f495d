"""The models an ACP client may pick for a session (its `model` config option), and whether a
key is configured at all (without one, the client is asked to authenticate).

A model is offered when it would open with a key: the session's own, `config.toml`'s
`default_model` and `[models]` tables, and each provider kind's default model (`providers`).
With `--provider`, only the models of that provider.
"""

from __future__ import annotations

from tui_agent.providers import DEFAULT_MODELS
from tui_agent.session import ConfigError, load_config, provider_for_model, resolve


def model_choices(current: str, provider: str | None, base_url: str | None) -> list[str]:
    """`current` first, then every other model that has what it needs to run."""
    try:
        config = load_config()
    except ConfigError:
        return [current]  # the session's opening has reported the file's problem
    kinds = [kind for kind in DEFAULT_MODELS if kind != "scripted"]
    candidates = [config.default_model, *config.models, *(DEFAULT_MODELS[k] for k in kinds)]
    choices = [current]
    for name in candidates:
        if not name or name in choices:
            continue
        if provider is not None and provider_for_model(config, name) != provider:
            continue
        try:
            usable = not resolve(config, provider=provider, model=name, base_url=base_url).demo
        except ConfigError:
            usable = False
        if usable:
            choices.append(name)
    return choices


def missing_key(provider: str | None, model: str | None, base_url: str | None) -> str | None:
    """Why the built-in demo would run for want of a key (the resolver's notice), or None."""
    try:
        resolved = resolve(load_config(), provider=provider, model=model, base_url=base_url)
    except ConfigError:
        return None  # opening the session reports it, with the file and the key
    return resolved.notice if resolved.demo else None
