"""The README's Architecture pictures are the ones the code draws today (see
`tests/support/architecture.py`; `make diagrams` redraws them)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.architecture import README, ROOT, readme_blocks


def test_the_readme_pictures_match_the_code() -> None:
    # In a child process: the traced run is the real command line, which tunes the garbage
    # collector and installs a profiler, neither of which may leak into the test process.
    drawn = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json; from tests.support.architecture import pictures; "
            "print(json.dumps(pictures()))",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    pictures = json.loads(drawn.stdout.splitlines()[-1])
    committed = readme_blocks(README.read_text(encoding="utf-8"))
    assert committed == pictures, "run `make diagrams` and commit README.md"
