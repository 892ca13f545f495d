"""The models a custom command's `model:` may run its turn on, resolved as `/model` resolves one.

`turn_models` gives the loop (`loop.turn_model`) a function from a model name to a `TurnModel`:
the name is resolved with the session's own flags (`--provider`, `--base-url`), the environment
and `config.toml` (`resolve`), so `/review` with `model: haiku` reaches what `/model haiku`
would. On the session's provider and endpoint the turn sends the other model id through the
session's provider; on another one (an `anthropic` model in an `openai` session) the turn gets
a provider of its own, built when the turn begins and closed when it ends. A name that would
fall back to the scripted demo (no key for its provider) or names an unknown provider is
refused, with the reason. A `--script` session's script plays whatever model is named (tests).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tui_agent.llm import Provider
from tui_agent.loop.turn_model import ModelRefused, TurnModel, TurnModels
from tui_agent.session._config import Config, ConfigError
from tui_agent.session._costs import price_override
from tui_agent.session._launch import LoopConfig
from tui_agent.session._resolve import ResolvedModel, resolve
from tui_agent.usage import Pricer


def model_pricer(settings: Config, resolved: ResolvedModel) -> Pricer:
    """A resolved model's prices (config.toml's `price_*_per_mtok` over genai-prices' table)."""
    return Pricer(
        resolved.model,
        provider=resolved.provider_kind,
        base_url=resolved.base_url,
        override=price_override(settings, resolved.model),
    )


def turn_models(
    config: LoopConfig,
    settings: Config,
    session: ResolvedModel,
    build: Callable[[ResolvedModel], Provider],
    environ: Mapping[str, str] | None = None,  # tests'; else the keys the process was given
) -> TurnModels:
    def choose(name: str) -> TurnModel:
        if session.script is not None:
            pricer = Pricer(name, provider="scripted", override=price_override(settings, name))
            return TurnModel(name, pricer, session.max_output_tokens)
        try:
            resolved = resolve(
                settings,
                provider=config.provider,
                model=name,
                base_url=config.base_url,
                environ=environ,
            )
        except ConfigError as exc:
            raise ModelRefused(f"model {name}: {exc}") from None
        if resolved.demo:
            why = resolved.notice or "no provider is configured for it"
            raise ModelRefused(f"model {name} cannot be used: {why.split(':')[0]}")
        same = (resolved.provider, resolved.base_url) == (session.provider, session.base_url)
        return TurnModel(
            resolved.model,
            model_pricer(settings, resolved),
            resolved.max_output_tokens,
            resolved.echo_reasoning,
            open_provider=None if same else lambda: build(resolved),
        )

    return choose
