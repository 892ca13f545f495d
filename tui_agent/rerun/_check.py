"""`replay --check`: rerun a log without a screen and say whether it came out the same.

`check_path` reads a session's `events.jsonl` and reruns it in a scratch folder; the `Verdict`
says how many records were compared and, when the rerun parts from the log, the first record
where it does (its number counts lines of the file from 1) with the fields that differ, or why
the log cannot be rerun at all (a damaged line, a record this version cannot reproduce).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tui_agent.context import Record, SessionMeta, read_log_async
from tui_agent.lazy_dataclass import dataclass
from tui_agent.rerun._conductor import Conductor, Divergence
from tui_agent.rerun._script import Unreplayable

_WIDTH = 70  # characters of one field's value in a report
YOLO_FALLBACK = (
    "  approvals: this log is older than logged answers, so the rerun ran in yolo and took "
    "the person's decisions from the tool results"
)


@dataclass(frozen=True)
class Verdict:
    records: int  # in the log
    divergence: Divergence | None = None
    unreplayable: str | None = None
    unreplayable_at: int | None = None  # the record (from 0) the rerun cannot reproduce
    # A log from before the person's answers were kept: the rerun runs in yolo and the
    # recorded results stand for the approvals.
    answers_unlogged: bool = False

    @property
    def at(self) -> int | None:
        """Where the log and the rerun part (from 0), whichever way they do."""
        return self.divergence.index if self.divergence is not None else self.unreplayable_at

    @property
    def ok(self) -> bool:
        return self.divergence is None and self.unreplayable is None

    def describe(self) -> str:
        """One paragraph for a person: identical, or where and how the rerun differs."""
        if self.unreplayable is not None:
            return f"cannot replay: {self.unreplayable}"
        divergence = self.divergence
        if divergence is None:
            said = f"identical: {self.records} records"
            if self.answers_unlogged:
                said += f"\n{YOLO_FALLBACK}"
            return said
        number = divergence.index + 1
        lines = [f"record {number} differs" + (f" ({divergence.why})" if divergence.why else "")]
        lines.append(f"  expected: {_compact(divergence.expected, divergence.got)}")
        lines.append(f"  got:      {_compact(divergence.got, divergence.expected)}")
        return "\n".join(lines)


def _compact(side: dict[str, Any] | None, other: dict[str, Any] | None) -> str:
    """The record's type and only the fields that differ from the other side's."""
    if side is None:
        return "nothing"
    same_kind = other is not None and other.get("type") == side.get("type")
    fields = {
        key: value
        for key, value in side.items()
        if key != "type" and not (same_kind and other is not None and other.get(key) == value)
    }
    shown = ", ".join(f"{key}={_short(value)}" for key, value in fields.items())
    return f"{side.get('type')} {shown}".rstrip()


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= _WIDTH else text[: _WIDTH - 1] + "…"


async def check_log(records: Sequence[Record], workdir: Path | None = None) -> Verdict:
    """Reruns `records` (in `workdir`, or a temporary folder) and compares."""
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="tui-agent-rerun-") as scratch:
            return await check_log(records, Path(scratch))
    try:
        conductor = Conductor(records, workdir)
    except Unreplayable as exc:
        return Verdict(len(records), unreplayable=str(exc), unreplayable_at=exc.index)
    meta = next((r for r in records if isinstance(r, SessionMeta)), None)
    unlogged = bool(records) and (meta is None or meta.approval_mode is None)
    return Verdict(len(records), await conductor.run(), answers_unlogged=unlogged)


async def check_path(path: Path) -> Verdict:
    bad_lines: list[int] = []
    records = await read_log_async(path, bad_lines)
    if bad_lines:
        return Verdict(len(records), unreplayable=f"line {bad_lines[0]} is not a record")
    return await check_log(records)
