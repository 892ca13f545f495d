"""Retry maths for one LLM step: whether a failed attempt is retried, and after how long.

Backoff is `min(500 * 2**n, 32000)` ms plus up to 25 % jitter, where `n` counts the retries
already made in the step; a provider's positive `retry_after_s` replaces it. Three limits bound
a step (`RetryPolicy`): its attempts; the sum of its waits (`budget_s`: a backoff that would
overrun it is cut to what is left, so a persistent 5xx gives up within about a minute by
default); and a `Retry-After` longer than `max_retry_after_s`, or than the budget left, fails at
once with a message saying when to retry. A server that cannot be reached at all (refused, no
such host) gets only `unreachable_attempts`. Pure functions: the turn machine injects the
randomness and the clock.
"""

from __future__ import annotations

import time

from tui_agent.kernel.ports import Random
from tui_agent.lazy_dataclass import dataclass
from tui_agent.vocab import LLMError, LLMErrorKind

BASE_DELAY_MS = 500
MAX_DELAY_MS = 32_000
JITTER = 0.25


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 10
    budget_s: float = 60.0  # the waits of one step add up to at most this
    max_retry_after_s: float = 60.0  # a longer Retry-After is not waited for
    unreachable_attempts: int = 3  # connection refused, host not found


def backoff_delay_s(retry_index: int, random: Random) -> float:
    """Delay before retry number `retry_index + 1` (0-based), in seconds, jitter included."""
    # 2**6 * 500 already exceeds the cap; clamping the exponent keeps huge indices cheap.
    base_ms = min(BASE_DELAY_MS << min(max(retry_index, 0), 7), MAX_DELAY_MS)
    return (base_ms + random() * JITTER * base_ms) / 1000


def max_attempts(configured: int) -> int:
    """At least one attempt, whatever the configuration says."""
    return max(configured, 1)


def _asked_wait_s(error: LLMError) -> float | None:
    if error.retry_after_s is not None and error.retry_after_s > 0:
        return error.retry_after_s
    return None


def attempt_limit(error: LLMError, policy: RetryPolicy) -> int:
    """How many attempts a step gets when its attempts fail this way."""
    limit = max_attempts(policy.max_attempts)
    if error.kind is LLMErrorKind.UNREACHABLE:
        return min(limit, max_attempts(policy.unreachable_attempts))
    return limit


def should_retry(error: LLMError, attempt: int, waited_s: float, policy: RetryPolicy) -> bool:
    """`attempt` is the 1-based number of the attempt that just failed; `waited_s` is what the
    step has already spent waiting between its attempts."""
    if not error.retryable or attempt >= attempt_limit(error, policy):
        return False
    left = policy.budget_s - waited_s
    asked = _asked_wait_s(error)
    if asked is not None:
        return asked <= min(policy.max_retry_after_s, left)
    return left > 0


def retry_delay_s(
    error: LLMError, attempt: int, waited_s: float, policy: RetryPolicy, random: Random
) -> float:
    """The wait before the attempt after `attempt`: retry-after if given, else backoff cut to
    the budget left."""
    asked = _asked_wait_s(error)
    if asked is not None:
        return asked
    return min(backoff_delay_s(attempt - 1, random), max(policy.budget_s - waited_s, 0.0))


def final_error(error: LLMError, waited_s: float, policy: RetryPolicy, now: float) -> LLMError:
    """The error a step fails with: when the provider asked for a wait longer than we allow,
    the message says when it may be retried (local time)."""
    asked = _asked_wait_s(error)
    if asked is None or not error.retryable:
        return error
    if asked <= min(policy.max_retry_after_s, policy.budget_s - waited_s):
        return error  # refused for another reason (attempts)
    when = time.localtime(now + asked)
    same_day = time.localtime(now)[:3] == when[:3]
    shown = time.strftime("%H:%M" if same_day else "%Y-%m-%d %H:%M", when)
    return error.model_copy(update={"message": f"{error.message} (retry after {shown})"})
