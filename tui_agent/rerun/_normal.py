"""What the log does not pin, normalised in this one place before two records are compared.

Each rule names a field whose value a faithful rerun cannot reproduce, and why:

- `ts` on every record: the wall clock when the line was written (records stamp themselves
  with `time.time`; the rerun runs now, and faster).
- `created_at` in an entry's meta (steers, notifications, kept entries of a compaction): the
  wall clock when the person pressed Enter.
- step uuids (`uuid` of `step.begin`/`step.end`, `step_uuid` of parts and calls): random per
  attempt (`uuid4`). They are compared as a matching: the n-th distinct uuid of the log must
  be the n-th of the rerun wherever it appears, so a part filed under the wrong step still
  differs.
- `delay_s` of a retry: the backoff is jittered by a random draw the log does not keep.
- `duration_ms` of a tool result: how long the tool ran.
- `tokens_before`/`tokens_after` of a compaction: estimates over the system prompt and tool
  specs, which the log does not hold (they come from the workspace's instructions and the
  version now running).

What the log pins by itself is kept exact: the order of parallel tools' results is the
recorded one because the recorded tools return in that order (`_tools.py`), and the person's
inputs enter where the log has them (`_script.py`).
"""

from __future__ import annotations

from typing import Any

from tui_agent.context import Record

_DROPPED: dict[str, tuple[str, ...]] = {
    "retry": ("delay_s",),
    "tool.result": ("duration_ms",),
    "compaction": ("tokens_before", "tokens_after"),
}
_STEP_KEYS = ("uuid", "step_uuid")


class Normaliser:
    """Normalises one side's records (keep one per side: the uuid matching is per side)."""

    def __init__(self) -> None:
        self._steps: dict[str, str] = {}

    def __call__(self, record: Record) -> dict[str, Any]:
        data = record.model_dump(mode="json")
        data.pop("ts", None)
        for key in _DROPPED.get(record.type, ()):
            data.pop(key, None)
        for key in _STEP_KEYS:
            if isinstance(data.get(key), str):
                data[key] = self._steps.setdefault(data[key], f"step-{len(self._steps) + 1}")
        cleaned: dict[str, Any] = _without_created_at(data)
        return cleaned


def _without_created_at(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: _without_created_at(item) for key, item in value.items() if key != "created_at"
        }
    if isinstance(value, list):
        return [_without_created_at(item) for item in value]
    return value
