"""The official MCP conformance suite's client scenarios, run against our client.

Each scenario costs seconds (a Node suite and a Python client start), so CI runs a sample:
the handshake and a tool call, elicitation defaults, and OAuth from discovery through dynamic
registration, PKCE and a 403 step-up, with a pre-registered client, and as a machine identity
(client credentials signed with a key); the local OAuth tests cover the rest in-process.
`benchmarks/mcp_conformance.py` runs every scenario for the figure in the README.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import mcp_conformance

SAMPLE = [
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "auth/scope-step-up",
    "auth/pre-registration",
    "auth/client-credentials-jwt",
]


@pytest.fixture(scope="module")
def suite() -> Path:
    return mcp_conformance.suite_bin()


@pytest.mark.parametrize("scenario", SAMPLE)
def test_conformance_scenario_passes(suite: Path, scenario: str, tmp_path: Path) -> None:
    outcome = mcp_conformance.run(suite, scenario, tmp_path)

    assert outcome.passed, outcome.output
