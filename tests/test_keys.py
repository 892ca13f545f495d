"""`tui_agent.keys`: which variables name keys, and where their values go.

The re-execution that clears `/proc/<pid>/environ` is tested on a real process in
tests/e2e/test_cli_reliability.py; here, the in-process rules (tests/conftest.py gives each
test fresh module state).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tui_agent import keys


def test_default_patterns_and_provider_variables_name_keys() -> None:
    keys.configure(keys.DEFAULT_SECRET_PATTERNS)
    for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "DEPLOY_SECRET", "ANTHROPIC_API_KEY"):
        assert keys.is_key(name), name
    for name in ("PATH", "HOME", "TOKEN_COUNT", "github_token"):
        assert not keys.is_key(name), name


def test_configured_keys_leave_the_environment_but_stay_readable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_CREDENTIAL", "c-123")
    monkeypatch.setenv("GITHUB_TOKEN", "t-456")
    monkeypatch.setenv("OPENAI_API_KEY", "k-789")
    monkeypatch.setenv("VISIBLE", "yes")
    keys.configure(["*_TOKEN"], ["MY_CREDENTIAL"])
    tool_env = keys.tool_environment()
    assert tool_env["VISIBLE"] == "yes"
    assert not {"MY_CREDENTIAL", "GITHUB_TOKEN", "OPENAI_API_KEY"} & set(tool_env)
    assert keys.lookup("MY_CREDENTIAL") == "c-123"
    assert keys.environ()["OPENAI_API_KEY"] == "k-789"


def test_narrower_patterns_leave_other_tokens_to_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GH_TOKEN", "t-1")
    keys.configure([])
    assert keys.tool_environment()["GH_TOKEN"] == "t-1"
    assert not keys.is_key("GH_TOKEN") and keys.is_key("OPENAI_API_KEY")


def test_the_raw_config_names_patterns_and_key_variables(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        'secret_env = ["*_PASSWORD"]\n[providers.a]\nkind = "openai"\napi_key_env = "A_CRED"\n'
        '[providers.b]\nkind = "anthropic"\n'
    )
    assert keys._configured(str(config)) == (("*_PASSWORD",), ["A_CRED"])


@pytest.mark.parametrize("text", ["secret_env = [unclosed", "secret_env = 3", None])
def test_a_missing_or_odd_config_means_the_default_patterns(
    tmp_path: Path, text: str | None
) -> None:
    config = tmp_path / "config.toml"
    if text is not None:
        config.write_text(text)
    assert keys._configured(str(config)) == (keys.DEFAULT_SECRET_PATTERNS, [])


def test_the_keys_cross_the_reexec_through_an_inherited_pipe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-carried\u00e9")
    monkeypatch.setenv("MY_CREDENTIAL", "c-1")
    keys.configure(["*_API_KEY"], ["MY_CREDENTIAL"])
    executed: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr(os, "execve", lambda path, argv, env: executed.append((argv, env)))
    keys._reexec()
    [(argv, env)] = executed
    assert argv[1:] == sys.orig_argv[1:]
    assert "OPENAI_API_KEY" not in env and "MY_CREDENTIAL" not in env
    monkeypatch.setattr(keys, "_held", {})
    monkeypatch.setattr(keys, "_names", frozenset())
    assert keys._adopt(env["TUI_AGENT_KEYS_FD"])
    assert keys.lookup("OPENAI_API_KEY") == "sk-carried\u00e9"
    assert keys.is_key("MY_CREDENTIAL") and keys.is_key("X_API_KEY")


def test_a_carrier_variable_that_names_no_pipe_is_ignored() -> None:
    assert not keys._adopt("not-a-number")


def test_a_star_matches_any_run_of_characters_anywhere() -> None:
    keys.configure(["AWS_*_KEY*", "EXACT"])
    assert keys.is_key("AWS_SECRET_ACCESS_KEY") and keys.is_key("AWS_X_KEY")
    assert keys.is_key("EXACT") and not keys.is_key("EXACTLY")
    assert not keys.is_key("AWS_KEY")  # the two underscores around `*` are both required
