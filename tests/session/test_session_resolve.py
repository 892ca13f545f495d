"""Model resolution: flags, then environment, then config.toml, else the scripted demo."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_agent.session import Config, ConfigError, known_limits, parse_config, resolve

LOCAL = """
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:9999/v1"
api_key_env = "LOCAL_KEY"

[models.coder]
provider = "local"
model = "Qwen/Qwen3-Coder-30B"
context_window = 65536
max_output_tokens = 4096
echo_reasoning = true
"""


def _config(text: str = "") -> Config:
    return parse_config(text, Path("config.toml"))


def test_no_key_anywhere_runs_the_demo_and_says_why() -> None:
    resolved = resolve(_config(), environ={})

    assert resolved.demo
    assert resolved.provider_kind == "scripted"
    assert resolved.notice is not None and "OPENAI_API_KEY" in resolved.notice


def test_openai_key_picks_openai_and_its_default_model() -> None:
    resolved = resolve(_config(), environ={"OPENAI_API_KEY": "k1"})

    assert (resolved.provider_kind, resolved.model) == ("openai", "gpt-4.1")
    assert resolved.base_url == "https://api.openai.com/v1"
    assert resolved.api_key == "k1"
    assert resolved.context_window == 1_047_576
    assert not resolved.demo


def test_anthropic_key_picks_anthropic_and_its_default_model() -> None:
    resolved = resolve(_config(), environ={"ANTHROPIC_API_KEY": "k2"})

    assert (resolved.provider_kind, resolved.model) == ("anthropic", "claude-sonnet-4-5")
    assert resolved.base_url == "https://api.anthropic.com"
    assert resolved.context_window == 200_000


def test_model_flag_beats_environment_beats_config() -> None:
    config = _config('default_model = "gpt-4o"\n')
    env = {"OPENAI_API_KEY": "k", "TUI_AGENT_MODEL": "gpt-4o-mini"}

    assert resolve(config, environ={"OPENAI_API_KEY": "k"}).model == "gpt-4o"
    assert resolve(config, environ=env).model == "gpt-4o-mini"
    assert resolve(config, model="gpt-4.1-mini", environ=env).model == "gpt-4.1-mini"


def test_a_claude_model_name_selects_anthropic() -> None:
    env = {"ANTHROPIC_API_KEY": "k"}

    resolved = resolve(_config(), model="claude-opus-4-1", environ=env)

    assert resolved.provider_kind == "anthropic"
    assert resolved.max_output_tokens == 32_000


def test_base_url_flag_beats_environment_beats_config() -> None:
    config = _config('[providers.openai]\nkind = "openai"\nbase_url = "http://config/v1"\n')
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://env/v1"}

    assert resolve(config, environ={"OPENAI_API_KEY": "k"}).base_url == "http://config/v1"
    assert resolve(config, environ=env).base_url == "http://env/v1"
    assert resolve(config, base_url="http://flag/v1", environ=env).base_url == "http://flag/v1"


def test_a_local_openai_server_needs_no_key() -> None:
    resolved = resolve(_config(), environ={"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"})

    assert resolved.provider_kind == "openai"
    assert resolved.base_url == "http://127.0.0.1:8000/v1"
    assert resolved.api_key is None
    assert not resolved.demo


def test_base_url_flag_alone_means_an_openai_compatible_server() -> None:
    resolved = resolve(_config(), base_url="http://127.0.0.1:8000/v1", environ={})

    assert (resolved.provider_kind, resolved.demo) == ("openai", False)


def test_configured_provider_and_model_table_are_used() -> None:
    resolved = resolve(_config(LOCAL), model="coder", environ={"LOCAL_KEY": "k3"})

    assert resolved.provider == "local"
    assert resolved.model == "Qwen/Qwen3-Coder-30B"
    assert resolved.base_url == "http://127.0.0.1:9999/v1"
    assert resolved.api_key == "k3"
    assert (resolved.context_window, resolved.max_output_tokens) == (65536, 4096)
    assert resolved.echo_reasoning


def test_sdk_base_url_variable_does_not_redirect_a_provider_of_your_own() -> None:
    env = {"LOCAL_KEY": "k", "OPENAI_BASE_URL": "http://elsewhere/v1"}

    assert resolve(_config(LOCAL), model="coder", environ=env).base_url == (
        "http://127.0.0.1:9999/v1"
    )


def test_provider_flag_ignores_a_default_model_of_another_provider() -> None:
    config = _config('default_model = "gpt-4o"\n')

    resolved = resolve(config, provider="anthropic", environ={"ANTHROPIC_API_KEY": "k"})

    assert resolved.model == "claude-sonnet-4-5"


def test_named_provider_without_its_key_falls_back_to_the_demo_naming_the_variable() -> None:
    resolved = resolve(_config(), provider="anthropic", environ={"OPENAI_API_KEY": "k"})

    assert resolved.demo
    assert resolved.notice is not None and "ANTHROPIC_API_KEY" in resolved.notice


def test_unknown_provider_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown provider 'azure'"):
        resolve(_config(), provider="azure", environ={})


def test_script_selects_the_scripted_provider_not_the_demo() -> None:
    resolved = resolve(_config(), script="steps.json", environ={"OPENAI_API_KEY": "k"})

    assert resolved.provider_kind == "scripted"
    assert resolved.script == Path("steps.json")
    assert not resolved.demo


def test_scripted_provider_without_a_script_is_the_demo() -> None:
    assert resolve(_config(), provider="scripted", environ={"OPENAI_API_KEY": "k"}).demo


def test_the_key_never_shows_in_repr() -> None:
    resolved = resolve(_config(), environ={"OPENAI_API_KEY": "sk-VISIBLE-NOWHERE"})

    assert "sk-VISIBLE-NOWHERE" not in repr(resolved)


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("gpt-4o-mini", 128_000),
        ("gpt-4.1-nano", 1_047_576),
        ("claude-3-5-haiku-latest", 200_000),
        ("deepseek-chat", 128_000),
        ("openrouter/anthropic/claude-sonnet-4", 200_000),
        ("some-local-model", 128_000),
    ],
)
def test_built_in_context_windows(model: str, window: int) -> None:
    assert known_limits(model)[0] == window
