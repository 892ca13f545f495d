"""The official MCP conformance suite's client scenarios, every one, against our client.

Run: `.venv/bin/python benchmarks/mcp_conformance.py`. Prints one row per scenario and the
figure the README quotes (passed / total, and passed / applicable). Needs `npm`: the suite and a
Node new enough for it are installed from `tests/node/mcp-conformance` on the first run (and,
for the scenarios in `FIXED_LATER`, the later release in `tests/node/mcp-conformance-next`). The
test (`tests/tools/mcp/test_mcp_conformance.py`) runs a sample of the same scenarios in CI.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import mcp_conformance  # noqa: E402


def main() -> None:
    bin_dir = mcp_conformance.suite_bin()
    names = mcp_conformance.scenarios(bin_dir)
    passed = 0
    print("| scenario | result |\n|---|---|")
    with tempfile.TemporaryDirectory() as results:
        for name in names:
            outcome = mcp_conformance.run(mcp_conformance.suite_bin(name), name, Path(results))
            passed += outcome.passed
            why = mcp_conformance.NOT_APPLICABLE.get(name)
            verdict = (
                "pass" if outcome.passed else f"FAIL{f' (not applicable: {why})' if why else ''}"
            )
            if name in mcp_conformance.FIXED_LATER:
                verdict += f" (run from {mcp_conformance.FIXED_LATER[name]})"
            print(f"| {name} | {verdict} |", flush=True)
            if not outcome.passed:
                print(outcome.output, file=sys.stderr)
    applicable = len(names) - len(mcp_conformance.NOT_APPLICABLE)
    print(f"\n{passed} of {len(names)} client scenarios pass ({applicable} apply to tui-agent)")


if __name__ == "__main__":
    main()
