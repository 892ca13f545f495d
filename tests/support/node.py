"""Node packages for the tests that drive programs we did not write (MCP servers, the MCP
conformance suite, the ACP TypeScript SDK).

Each set lives in `tests/node/NAME/` as a `package.json` with its `package-lock.json`, so the
versions are pinned in the repository. `node_packages(NAME)` installs that set once per lock
(`npm ci`, into a cache folder keyed by the lock's hash, under a file lock so parallel test
workers install it once) and returns the folder holding `node_modules`. Where `npm` is missing
the calling test is skipped with a message naming what to install; an `npm ci` that fails is an
error, not a skip, because CI must not quietly stop running these tests.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

SETS = Path(__file__).resolve().parents[1] / "node"
INSTALL_TIMEOUT_S = 300


def node_packages(name: str) -> Path:
    """The folder where `tests/node/NAME`'s locked packages are installed."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("node and npm are not installed (Debian: apt-get install nodejs npm)")
    source = SETS / name
    lock = (source / "package-lock.json").read_bytes()
    digest = hashlib.sha256(lock + (source / "package.json").read_bytes()).hexdigest()[:12]
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    target = cache / "tui-agent-tests" / "node" / f"{name}-{digest}"
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{name}.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if not (target / ".installed").exists():
            _install(npm, source, target)
    return target


def _install(npm: str, source: Path, target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    for file in ("package.json", "package-lock.json"):
        shutil.copy(source / file, target / file)
    done = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=target,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    if done.returncode != 0:
        raise RuntimeError(f"npm ci in {target} failed:\n{done.stderr[-4000:]}")
    (target / ".installed").touch()
