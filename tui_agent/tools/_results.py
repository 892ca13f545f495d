"""Shaping a tool's result before anyone sees it: fixed texts, normalisation and spill to disk.

Normalisation makes every result say something (`Tool output is empty.`), escapes what UTF-8
cannot encode, gives media-only output a text companion, joins text-only part lists into one
string and drops a blank `note`.
Spill keeps the model's context small: text over 50,000 characters is written whole to the
session's spill folder and replaced by a pointer with a head and tail preview and directions
for reading the rest with `read_file`. A tool whose output may be too big to hold (the shell)
streams it to a spill file itself and returns the pointer from `spilled`.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import aiofiles
import aiofiles.os

from tui_agent.vocab import ContentPart, Spill, TextPart, ToolResult, error_result, marked
from tui_agent.vocab.tools import ABORTED, DENIED

SPILL_THRESHOLD = 50_000
PREVIEW_HEAD = 4_096
PREVIEW_TAIL = 1_024
EMPTY_OUTPUT = "Tool output is empty."
NON_TEXT_OUTPUT = "Tool returned non-text content."
SKIPPED = "Tool skipped because a previous tool call stopped the turn."

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def not_found(name: str) -> ToolResult:
    return error_result(f'Tool "{name}" not found')


def invalid_args(name: str, why: str) -> ToolResult:
    return error_result(f'Invalid args for tool "{name}": {why}')


def failed(name: str, error: BaseException) -> ToolResult:
    return error_result(f'Tool "{name}" failed: {error}')


def aborted(
    name: str, reason: str | None, partial: str = "", *, started: bool = True
) -> ToolResult:
    """What the model reads of a call that was stopped (`started`: while it ran) or cancelled
    before it started (it did nothing, which the model must know to judge what is left)."""
    if not started:
        text = _cancelled_before_start(name, reason)
    elif reason == "user_cancelled":
        text = (
            f'The user manually interrupted "{name}" (and anything else running at the same '
            "time). Do not retry it unless asked."
        )
    elif reason == "user_stopped_call":
        text = (
            f'The user stopped "{name}" while it ran; the turn goes on. '
            "Do not retry it unless asked."
        )
    else:
        text = f'Tool "{name}" was aborted'
    if partial.strip():
        text += f"\nOutput before it stopped:\n{partial}"
    # The mark lets every view show the call as aborted rather than failed.
    return marked(error_result(text), ABORTED, reason=reason or "aborted")


def _cancelled_before_start(name: str, reason: str | None) -> str:
    if reason == "user_cancelled":
        return (
            f'The user cancelled the turn before "{name}" started, so it did not run. '
            "Do not retry it unless asked."
        )
    if reason == "user_stopped_call":
        return (
            f'The user cancelled "{name}" before it started, so it did not run; the turn goes '
            "on. Do not retry it unless asked."
        )
    return f'Tool "{name}" was cancelled before it started, so it did not run.'


def denied(result: ToolResult) -> ToolResult:
    """The result that replaces a call the approvals refused, marked so views say denied."""
    return marked(result, DENIED)


def normalize(result: ToolResult) -> ToolResult:
    output = result.output
    if isinstance(output, tuple):
        if all(isinstance(part, TextPart) for part in output):
            output = "\n".join(part.text for part in output if isinstance(part, TextPart))
        elif not any(isinstance(part, TextPart) and part.text.strip() for part in output):
            output = (TextPart(text=NON_TEXT_OUTPUT), *output)
    if isinstance(output, str):
        output = encodable(output) if output.strip() else EMPTY_OUTPUT
    note = result.note if result.note and result.note.strip() else None
    if output is result.output and note == result.note:
        return result
    return result.model_copy(update={"output": output, "note": note})


def encodable(text: str) -> str:
    """`text` as a request can carry it: lone surrogates (the bytes of a file name that is not
    UTF-8, as Python decodes it) become `\\xNN` escapes instead of failing the whole request."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:
            return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def safe_name(text: str) -> str:
    return _UNSAFE.sub("_", text)[:80] or "tool-result"


def _pointer(name: str, call_id: str, size: int, head: str, tail: str, path: str | None) -> str:
    lines = [f"Tool output exceeded {SPILL_THRESHOLD} characters; it was cut for the context."]
    lines += [f"tool_name: {name}", f"tool_call_id: {call_id}", f"output_size_chars: {size}"]
    if path is not None:
        lines += [
            f"output_path: {path}",
            "next_step: the whole output is in that file; read more of it with read_file "
            "(path = output_path, offset = the first line to show, limit = how many lines) "
            "or search it with grep (path = output_path).",
        ]
    else:
        lines.append("output_path: (saving the full output failed; only this preview remains)")
    lines += [
        f"--- first {PREVIEW_HEAD} characters ---",
        head[:PREVIEW_HEAD],
        f"--- last {PREVIEW_TAIL} characters ---",
        tail[-PREVIEW_TAIL:],
    ]
    return "\n".join(lines)


def spill_path(spill_dir: Path, name: str, call_id: str) -> Path:
    """A new file in `spill_dir` for the whole output of one call."""
    return spill_dir / f"{safe_name(name)}-{safe_name(call_id)}-{uuid.uuid4().hex}.txt"


def spilled(
    result: ToolResult,
    name: str,
    call_id: str,
    path: Path,
    length: tuple[int, int],
    head: str,
    tail: str,
) -> ToolResult:
    """`result` with its output replaced by a pointer to `path`, which holds all of it
    (`length`: characters, lines; written there by the tool, as they came)."""
    size, lines = length
    return result.model_copy(
        update={
            "output": _pointer(name, call_id, size, head, tail, str(path)),
            "truncated": True,
            "spill": Spill(output_path=str(path), total_chars=size),
            "spill_exempt": True,
            "display": _with_lines(result.display, lines),
        }
    )


def _with_lines(display: dict[str, Any] | None, lines: int) -> dict[str, Any]:
    """The result's `display` saying how many lines the whole output has: the UI shows that
    count for a spilled output, not the lines of its pointer."""
    return {**(display or {}), "output_lines": lines}


async def spill(result: ToolResult, name: str, call_id: str, spill_dir: Path) -> ToolResult:
    """Replace output over the threshold with a pointer to a file holding all of it."""
    if result.spill_exempt:
        return result
    output = result.output
    parts: tuple[ContentPart, ...] = output if isinstance(output, tuple) else ()
    text = (
        output
        if isinstance(output, str)
        else "\n".join(p.text for p in parts if isinstance(p, TextPart))
    )
    if len(text) <= SPILL_THRESHOLD:
        return result
    target = spill_path(spill_dir, name, call_id)
    path: Path | None = target
    try:
        await aiofiles.os.makedirs(spill_dir, exist_ok=True)
        async with aiofiles.open(target, "w", encoding="utf-8", errors="replace") as handle:
            await handle.write(text)
    except OSError:
        path = None  # the preview alone still goes to the model
    pointer = _pointer(name, call_id, len(text), text, text, None if path is None else str(path))
    media = tuple(p for p in parts if not isinstance(p, TextPart))
    new_output: str | tuple[ContentPart, ...] = (
        (TextPart(text=pointer), *media) if media else pointer
    )
    return result.model_copy(
        update={
            "output": new_output,
            "truncated": True,
            "spill": None if path is None else Spill(output_path=str(path), total_chars=len(text)),
            "display": _with_lines(result.display, len(text.splitlines())),
        }
    )
