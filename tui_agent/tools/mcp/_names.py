"""The names the model sees for server tools: `mcp__<server>__<tool>`, kept within what every
provider accepts (letters, digits, `_` and `-`, at most 64 characters)."""

from __future__ import annotations

import hashlib
import re

PREFIX = "mcp__"
MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, unchanged when valid; otherwise other characters become `_`
    and an over-long name keeps its head and gets a short hash of the whole, so it stays unique."""
    whole = f"{PREFIX}{server}__{tool}"
    name = _UNSAFE.sub("_", whole)
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha1(whole.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"
