"""UI test settings: keep the snapshot plugin's own working directory variable.

The root conftest removes every `TEXTUAL_*` variable so no user setting leaks into a picture;
pytest-textual-snapshot keeps its temporary directory in `TEXTUAL_SNAPSHOT_TEMPDIR`, set once
per session, so it is put back for each test (it changes nothing on screen).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

_SNAPSHOT_TEMPDIR = "TEXTUAL_SNAPSHOT_TEMPDIR"


@pytest.fixture(scope="session")
def _snapshot_tempdir() -> str | None:
    # Session fixtures are set up before the function-scoped scrubbing runs.
    return os.environ.get(_SNAPSHOT_TEMPDIR)


@pytest.fixture(autouse=True)
def _keep_snapshot_tempdir(
    _snapshot_tempdir: str | None, _isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    if _snapshot_tempdir is not None:
        monkeypatch.setenv(_SNAPSHOT_TEMPDIR, _snapshot_tempdir)
    yield
