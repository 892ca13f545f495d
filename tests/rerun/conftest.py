"""One corpus of scripted sessions for every rerun test (built once: it runs the real loop)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.rerun.corpus import Corpus, build_corpus


@pytest.fixture(scope="session")
def corpus_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rerun-home")


@pytest.fixture(scope="session")
def corpus(corpus_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build_corpus(corpus_home, tmp_path_factory.mktemp("rerun-ws"))
