"""The committed machine diagrams are the ones the code draws today."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_agent.kernel.diagrams import MACHINES, dot_source, normalize_dot

DOCS = Path(__file__).resolve().parents[2] / "docs" / "machines"


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_committed_dot_matches_the_code(name: str) -> None:
    committed = (DOCS / f"{name}.dot").read_text(encoding="utf-8")
    assert dot_source(MACHINES[name]) == committed, "run `make diagrams` and commit docs/machines"


def test_dot_normalisation_renumbers_generated_ids_in_order() -> None:
    raw = "__initial_140211 -> a; cluster___atomic_140299; __initial_140211_sg"
    assert normalize_dot(raw) == "__initial_0 -> a; cluster___atomic_1; __initial_0_sg"


def test_turn_diagram_draws_the_eventless_transitions() -> None:
    source = dot_source(MACHINES["turn"])
    assert "running -> draining" in source and "gating -> streaming" in source
