"""Retry maths for one LLM step: whether a failed attempt is retried, and after how long.

Backoff is `min(500 * 2**n, 32000)` ms plus up to 25 % jitter, where `n` counts the retries
already made in the step; a provider's positive `retry_after_s` replaces it. Pure functions: the
turn machine injects the randomness.
"""

from __future__ import annotations

from tui_agent.kernel.ports import Random
from tui_agent.vocab import LLMError

BASE_DELAY_MS = 500
MAX_DELAY_MS = 32_000
JITTER = 0.25


def backoff_delay_s(retry_index: int, random: Random) -> float:
    """Delay before retry number `retry_index + 1` (0-based), in seconds, jitter included."""
    # 2**6 * 500 already exceeds the cap; clamping the exponent keeps huge indices cheap.
    base_ms = min(BASE_DELAY_MS << min(max(retry_index, 0), 7), MAX_DELAY_MS)
    return (base_ms + random() * JITTER * base_ms) / 1000


def max_attempts(configured: int) -> int:
    """At least one attempt, whatever the configuration says."""
    return max(configured, 1)


def should_retry(error: LLMError, attempt: int, configured_max: int) -> bool:
    """`attempt` is the 1-based number of the attempt that just failed."""
    return error.retryable and attempt < max_attempts(configured_max)


def retry_delay_s(error: LLMError, attempt: int, random: Random) -> float:
    """The wait before the attempt after `attempt`: retry-after if given, else backoff."""
    if error.retry_after_s is not None and error.retry_after_s > 0:
        return error.retry_after_s
    return backoff_delay_s(attempt - 1, random)
