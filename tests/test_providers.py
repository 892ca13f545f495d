"""The provider facts have one owner (`tui_agent.providers`): what reads them agrees with it."""

from __future__ import annotations

from tui_agent import keys
from tui_agent.cli import _parser
from tui_agent.providers import DEFAULT_MODELS, ENDPOINTS, PROVIDER_KINDS
from tui_agent.session._config import BUILTIN_PROVIDERS
from tui_agent.vocab import APPROVAL_MODES


def _choices(dest: str) -> tuple[str, ...]:
    [action] = [a for a in _parser()._actions if a.dest == dest]
    assert action.choices is not None
    return tuple(action.choices)


def test_every_kind_has_a_default_model_and_every_http_kind_an_endpoint() -> None:
    assert set(DEFAULT_MODELS) == set(PROVIDER_KINDS)
    assert set(ENDPOINTS) <= set(PROVIDER_KINDS)


def test_every_provider_key_variable_is_held_out_of_tool_environments() -> None:
    # keys.py runs before anything is imported, so it lists the names again: it must not miss one.
    assert {endpoint.key_env for endpoint in ENDPOINTS.values()} <= set(keys.PROVIDER_KEY_ENVS)


def test_the_command_lines_offer_the_kinds_and_modes_their_owners_define() -> None:
    assert _choices("provider") == PROVIDER_KINDS == BUILTIN_PROVIDERS
    # The parser keeps the vocabulary unloaded for the first frame, so it lists the modes itself.
    assert _choices("approval_mode") == APPROVAL_MODES
