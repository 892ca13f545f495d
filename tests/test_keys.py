"""`tui_agent.keys`: which variables name keys, and where their values go.

Clearing `/proc/<pid>/environ` is tested on a real process here (wiped in place, in one
interpreter start) and through the command line in tests/e2e/test_cli_reliability.py; the rest
are the in-process rules (tests/conftest.py gives each test fresh module state).
"""

from __future__ import annotations

import os
import subprocess
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


# Prints a line when the interpreter starts the script (twice if `protect` re-executed it), then
# what its own /proc/self/environ and a child's environment show after `protect`.
_PROTECTED = """
import os, subprocess, sys
print("started", flush=True)
from tui_agent import keys
keys.protect(sys.argv[1])
print("held", keys.lookup("ANTHROPIC_API_KEY"), keys.lookup("DEPLOY_TOKEN"))
with open("/proc/self/environ", "rb") as handle:
    sys.stdout.write(handle.read().replace(b"\\0", b"\\n").decode())
print("child:")
sys.stdout.flush()
subprocess.run(["env"], check=True)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_protect_wipes_the_keys_from_the_environment_block_in_one_start(tmp_path: Path) -> None:
    secrets = {"ANTHROPIC_API_KEY": "sk-ant-WIPED-0123", "DEPLOY_TOKEN": "tok-WIPED-4567"}
    env = {**os.environ, **secrets, "VISIBLE": "still-here"}
    done = subprocess.run(
        [sys.executable, "-c", _PROTECTED, str(tmp_path / "config.toml")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    own, child = done.stdout.split("child:")
    assert done.stdout.count("started") == 1  # no second interpreter start
    assert "held sk-ant-WIPED-0123 tok-WIPED-4567" in own
    own = own.split("\n", 2)[2]  # what /proc/self/environ showed
    assert "VISIBLE=still-here" in own and "VISIBLE=still-here" in child
    for value in secrets.values():
        assert value not in own and value not in child


def test_protect_re_executes_where_the_block_cannot_be_wiped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unwipeable")
    monkeypatch.setattr(keys, "_wipe_block", lambda: False)
    monkeypatch.setattr(keys, "_forbid_dumping", lambda: None)  # this is the test's process
    executed: list[dict[str, str]] = []
    monkeypatch.setattr(os, "execve", lambda path, argv, env: executed.append(env))
    keys.protect(str(tmp_path / "config.toml"))
    [env] = executed
    assert "OPENAI_API_KEY" not in env and "TUI_AGENT_KEYS_FD" in env
    os.close(int(env["TUI_AGENT_KEYS_FD"]))
