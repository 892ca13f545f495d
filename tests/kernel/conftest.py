"""Every kernel test also asserts that no machine caught an error along the way."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kernel import fakes


@pytest.fixture(autouse=True)
def _no_machine_errors() -> Iterator[None]:
    fakes.RIGS.clear()
    yield
    caught = [error for rig in fakes.RIGS for error in rig.agent.errors]
    fakes.RIGS.clear()
    assert caught == [], f"machines caught errors: {caught!r}"
