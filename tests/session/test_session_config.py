"""config.toml: what it accepts, and errors that name the file, the line and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_agent.session import AppPaths, ConfigError, load_config

FULL = """
default_model = "qwen3-coder"
approval_mode = "auto-edit"
max_steps_per_turn = 40
max_attempts_per_step = 3

[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:8080/v1"
api_key_env = "LOCAL_KEY"

[models."qwen3-coder"]
provider = "local"
model = "Qwen/Qwen3-Coder-30B"
context_window = 65536
max_output_tokens = 4096
echo_reasoning = true
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_missing_file_gives_the_defaults(tmp_path: Path) -> None:
    config = load_config(tmp_path / "absent.toml")

    assert config.approval_mode == "ask"
    assert config.max_steps_per_turn == 100
    assert config.max_attempts_per_step == 10
    assert config.providers == {} and config.models == {}


def test_default_location_is_under_tui_agent_home(tmp_path: Path) -> None:
    AppPaths.from_env().config_file.write_text("max_steps_per_turn = 7\n")

    assert load_config().max_steps_per_turn == 7


def test_a_full_file_is_read(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, FULL))

    assert config.default_model == "qwen3-coder"
    assert config.approval_mode == "auto-edit"
    assert config.max_steps_per_turn == 40
    assert config.providers["local"].base_url == "http://127.0.0.1:8080/v1"
    model = config.models["qwen3-coder"]
    assert (model.provider, model.model, model.context_window) == (
        "local",
        "Qwen/Qwen3-Coder-30B",
        65536,
    )
    assert model.echo_reasoning is True


def test_retry_limits_and_secret_patterns_are_read_with_defaults(tmp_path: Path) -> None:
    defaults = load_config(tmp_path / "absent.toml")
    assert (defaults.retry_budget_s, defaults.max_retry_after_s) == (60.0, 60.0)
    assert defaults.secret_env == ["*_API_KEY", "*_TOKEN", "*_SECRET"]
    text = 'retry_budget_s = 300\nmax_retry_after_s = 5.5\nsecret_env = ["*_API_KEY"]\n'
    config = load_config(_write(tmp_path, text))
    assert (config.retry_budget_s, config.max_retry_after_s) == (300.0, 5.5)
    assert config.secret_env == ["*_API_KEY"]


def test_a_retry_budget_of_zero_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"config\.toml: retry_budget_s: "):
        load_config(_write(tmp_path, "retry_budget_s = 0\n"))


def test_syntax_error_names_the_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, 'default_model = "gpt-4.1"\n\napproval_mode = \n')

    with pytest.raises(ConfigError) as caught:
        load_config(path)

    assert str(caught.value).startswith(f"{path}, line 3, column")
    assert "invalid TOML" in str(caught.value)
    assert caught.value.line == 3


def test_bad_value_names_the_file_and_the_key(tmp_path: Path) -> None:
    path = _write(tmp_path, '[models."gpt-4.1"]\ncontext_window = -5\n')

    with pytest.raises(ConfigError) as caught:
        load_config(path)

    assert str(caught.value).startswith(f'{path}: models."gpt-4.1".context_window: ')
    assert "-5" in str(caught.value)
    assert caught.value.key == 'models."gpt-4.1".context_window'


def test_bad_approval_mode_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"config\.toml: approval_mode: "):
        load_config(_write(tmp_path, 'approval_mode = "sometimes"\n'))


def test_unknown_key_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"providers\.local\.colour: unknown key"):
        load_config(_write(tmp_path, '[providers.local]\nkind = "openai"\ncolour = "red"\n'))


def test_model_naming_an_undefined_provider_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"models\.fast\.provider: unknown provider 'nowhere'"):
        load_config(_write(tmp_path, '[models.fast]\nprovider = "nowhere"\n'))


def test_a_key_pasted_as_api_key_env_is_never_echoed(tmp_path: Path) -> None:
    secret = "sk-proj-SECRETSECRET-1234"
    text = f'[providers.openai]\nkind = "openai"\napi_key_env = "{secret}"\n'

    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, text))

    assert "api_key_env" in str(caught.value)
    assert secret not in str(caught.value)


def test_a_key_written_into_the_file_is_refused_without_echoing_it(tmp_path: Path) -> None:
    secret = "sk-ant-SECRETSECRET"
    text = f'[providers.anthropic]\nkind = "anthropic"\napi_key = "{secret}"\n'

    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, text))

    assert "api_key_env" in str(caught.value)
    assert secret not in str(caught.value)


def test_the_turn_end_notice_is_set_in_the_file_and_a_wrong_value_is_named(tmp_path: Path) -> None:
    assert load_config(tmp_path / "absent.toml").turn_end_notice == "bell+desktop"
    assert load_config(_write(tmp_path, 'turn_end_notice = "off"\n')).turn_end_notice == "off"
    with pytest.raises(ConfigError, match="turn_end_notice"):
        load_config(_write(tmp_path, 'turn_end_notice = "loud"\n'))
