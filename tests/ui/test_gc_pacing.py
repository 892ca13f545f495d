"""Full garbage collections wait while the person types (`ui/gc_pacing.py`)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator

import pytest

from tui_agent.ui.gc_pacing import HELD_ROUNDS, QUIET_S, TypingCollections


class Later:
    """The app's timers, run by the test: each callback with the delay it asked for."""

    def __init__(self) -> None:
        self.pending: list[tuple[float, Callable[[], None]]] = []

    def __call__(self, seconds: float, callback: Callable[[], None]) -> None:
        self.pending.append((seconds, callback))

    def run_next(self) -> float:
        seconds, callback = self.pending.pop(0)
        callback()
        return seconds


@pytest.fixture(autouse=True)
def thresholds() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*before)


def test_full_collections_wait_from_the_first_key_to_the_first_pause(
    thresholds: tuple[int, int, int],
) -> None:
    now = [100.0]
    later = Later()
    pacing = TypingCollections(lambda: now[0], later)
    pacing.typed()
    young, middle, oldest = gc.get_threshold()
    assert (young, middle) == thresholds[:2] and oldest > 10**9
    now[0] += 0.6
    pacing.typed()  # still typing: no second timer
    assert len(later.pending) == 1
    now[0] += 0.5
    later.run_next()  # 1.1 s after the first key, 0.5 s after the last: not yet
    assert pacing.holding
    assert later.pending[0][0] == pytest.approx(QUIET_S - 0.5)
    now[0] += QUIET_S
    later.run_next()
    assert not pacing.holding
    assert gc.get_threshold() == thresholds
    assert not later.pending


def test_a_held_full_collection_runs_after_a_key_s_echo_once_its_count_is_up(
    thresholds: tuple[int, int, int],
) -> None:
    """Python's count of young collections, `HELD_ROUNDS` times over, says when; old cycles are
    not kept until a pause."""
    pacing = TypingCollections(lambda: 0.0, Later())
    old = Cycle()
    gc.collect(1)  # `old` survives the young generations: only a full collection frees it now
    gone = weakref.ref(old)
    del old
    pacing.typed()
    while gc.get_count()[2] < HELD_ROUNDS * thresholds[2]:  # not yet
        gc.collect(1)
    collections = gc.get_stats()[2]["collections"]
    pacing.key_painted()
    assert gc.get_stats()[2]["collections"] == collections and gone() is not None
    gc.collect(1)  # one more young collection: now
    pacing.key_painted()
    assert gc.get_stats()[2]["collections"] == collections + 1 and gone() is None
    assert pacing.holding  # still held until a pause


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_release_gives_back_the_thresholds_it_found(thresholds: tuple[int, int, int]) -> None:
    pacing = TypingCollections(lambda: 0.0, Later())
    pacing.typed()
    pacing.release()
    assert gc.get_threshold() == thresholds
    pacing.release()  # twice is harmless
    assert gc.get_threshold() == thresholds
