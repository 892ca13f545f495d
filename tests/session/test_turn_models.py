"""A custom command's `model:` resolved for its turn as `/model` resolves a name: the session's
provider sends another model id, another provider is built for the turn, and a model the
session cannot reach is refused with the reason; a logged step priced by the model it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fake_model import FakeModel
from tui_agent.context import Prompt, SessionMeta, StepBegin, StepEnd, TurnBegin
from tui_agent.llm import Provider
from tui_agent.loop.replay import replay
from tui_agent.loop.turn_model import ModelRefused, TurnModels
from tui_agent.session import parse_config, resolve
from tui_agent.session._branches import logged_tree
from tui_agent.session._costs import logged_cost
from tui_agent.session._launch import LoopConfig
from tui_agent.session._paths import AppPaths
from tui_agent.session._resolve import ResolvedModel
from tui_agent.session._turn_models import turn_models
from tui_agent.vocab import FinishReason, TokenUsage, user_message

CONFIG = """
[models.quick]
model = "gpt-4.1-mini"
max_output_tokens = 2048
price_input_per_mtok = 0.5
price_output_per_mtok = 2.0
"""


def chooser(env: dict[str, str], built: list[ResolvedModel]) -> TurnModels:
    settings = parse_config(CONFIG, Path("config.toml"))
    session = resolve(settings, model="gpt-4.1", environ=env)

    def build(other: ResolvedModel) -> Provider:
        built.append(other)
        return FakeModel([], name=other.provider_kind, model=other.model)

    return turn_models(LoopConfig(workspace=Path(".")), settings, session, build, environ=env)


def test_a_model_of_the_sessions_provider_is_sent_through_it_under_its_own_id() -> None:
    built: list[ResolvedModel] = []
    chosen = chooser({"OPENAI_API_KEY": "k"}, built)("quick")
    assert (chosen.model, chosen.max_output_tokens) == ("gpt-4.1-mini", 2048)
    assert chosen.open_provider is None
    # Priced by config.toml's prices for it: 1M input and 1M output tokens.
    assert chosen.pricer.cost(TokenUsage(input_other=1_000_000, output=1_000_000)) == 2.5


def test_a_model_of_another_provider_gets_a_provider_of_its_own_for_the_turn() -> None:
    built: list[ResolvedModel] = []
    env = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "a"}
    chosen = chooser(env, built)("claude-haiku-4-5")
    assert chosen.model == "claude-haiku-4-5" and chosen.open_provider is not None
    assert built == []  # built only when its turn begins
    provider = chosen.open_provider()
    assert (provider.name, provider.model) == ("anthropic", "claude-haiku-4-5")


def test_a_model_the_session_cannot_reach_is_refused_with_the_reason() -> None:
    why = "model claude-haiku-4-5 cannot be used: ANTHROPIC_API_KEY is not set"
    with pytest.raises(ModelRefused, match=why):
        chooser({"OPENAI_API_KEY": "k"}, [])("claude-haiku-4-5")


def test_a_logged_session_prices_each_step_by_the_model_its_record_names() -> None:
    """`tui-agent sessions`, export and `/tree` read the log: a step `step.end` names is priced
    by that model, config.toml's prices for it included; the others by the session's."""
    paths = AppPaths.from_env()
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text(
        CONFIG + "\n[models.main]\nmodel = 'main-model'\n"
        "price_input_per_mtok = 10.0\nprice_output_per_mtok = 10.0\n"
    )
    million = TokenUsage(input_other=1_000_000)
    records = [
        SessionMeta(session_id="s", workspace=".", provider="openai", model="main-model"),
        TurnBegin(turn_id=0),
        Prompt(prompt_id="p1", message=user_message("/quick")),
        StepBegin(uuid="a", turn_id=0, step=1),
        StepEnd(uuid="a", finish_reason=FinishReason.END_TURN, usage=million, model="gpt-4.1-mini"),
        TurnBegin(turn_id=1),
        Prompt(prompt_id="p2", message=user_message("plain")),
        StepBegin(uuid="b", turn_id=1, step=1),
        StepEnd(uuid="b", finish_reason=FinishReason.END_TURN, usage=million),
    ]
    _, spent = logged_cost(records, replay(records, context_window=0).events)
    assert spent.cost_usd == pytest.approx(0.5 + 10.0)
    assert [node.cost_usd for node in logged_tree(records).nodes] == [0.5, 10.0]
