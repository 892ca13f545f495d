"""Running the official MCP conformance suite's client scenarios against our client
(tests/tools/mcp/conformance_client.py), for the test and for the figure in the README.

The suite and a Node new enough for it are the pinned set `tests/node/mcp-conformance`
(`node_packages` installs it once). A scenario whose mock server in that release is wrong and
was fixed upstream later (`FIXED_LATER`) runs from the later release pinned in
`tests/node/mcp-conformance-next`. `run(scenario)` runs one scenario and says whether every
check passed, with the suite's output to show when not.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.support.node import node_packages

ROOT = Path(__file__).resolve().parents[2]
CLIENT = f"{sys.executable} -m tests.tools.mcp.conformance_client"
TIMEOUT_S = 120
# The suite's own limit for one client run (its default, 30 s, is short for a busy machine).
CLIENT_TIMEOUT_MS = 90_000

# A scenario of the suite's extensions that tui-agent does not offer: enterprise-managed
# cross-app access (SEP-990). It starts from an ID token the client already holds from the
# enterprise's single sign-on, which tui-agent has no login for, and sends it to an
# authorization server the client must be configured with (see benchmarks/README.md).
NOT_APPLICABLE = {
    "auth/cross-app-access-complete-flow": "enterprise cross-app access (SEP-990 extension)",
}

# Scenarios whose mock in the pinned release breaks the rule the client must keep: there the
# authorization server metadata served at the root names the issuer `<origin>/oauth`, which
# RFC 8414 §3.3 says a client must refuse. Fixed upstream (conformance PRs #359 and #361, in
# 0.2.0-alpha.7 and later): the same scenario is run from that release.
FIXED_LATER = {
    "auth/2025-03-26-oauth-metadata-backcompat": "0.2.0-alpha.12 (mock fixed by PR #359, #361)",
}


@dataclass(frozen=True)
class Outcome:
    scenario: str
    passed: bool
    output: str


def suite_bin(scenario: str = "") -> Path:
    """The suite to run `scenario` from: the pinned release, or the later one for a scenario
    whose mock that release got wrong."""
    name = "mcp-conformance-next" if scenario in FIXED_LATER else "mcp-conformance"
    return node_packages(name) / "node_modules" / ".bin"


def scenarios(bin_dir: Path) -> list[str]:
    """Every client scenario the pinned suite lists."""
    listed = subprocess.run(
        [str(bin_dir / "conformance"), "list"],
        env=_env(bin_dir),
        capture_output=True,
        text=True,
        check=True,
        timeout=TIMEOUT_S,
    ).stdout
    names = listed.split("Client scenarios", 1)[1].splitlines()
    return [line.split()[1] for line in names if line.strip().startswith("- ")]


def run(bin_dir: Path, scenario: str, results: Path) -> Outcome:
    done = subprocess.run(
        [
            str(bin_dir / "conformance"),
            "client",
            "--command",
            CLIENT,
            "--scenario",
            scenario,
            "-o",
            str(results),
            "--timeout",
            str(CLIENT_TIMEOUT_MS),
        ],
        cwd=ROOT,
        env=_env(bin_dir),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    return Outcome(scenario, done.returncode == 0, (done.stdout + done.stderr)[-6000:])


def _env(bin_dir: Path) -> dict[str, str]:
    # The pinned Node first: the suite needs Node 22, the machine's may be older.
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
