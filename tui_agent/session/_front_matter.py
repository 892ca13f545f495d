"""The front matter of Markdown files people bring (skills, custom commands): a YAML block
fenced by `---` lines at the top, then the body.

Claude Code writes these as YAML, so they are read with PyYAML (`safe_load`). Files written by
hand for the older, line-based reading (`description: Review: the code`) are not always valid
YAML; rather than refuse them, such a block is read line by line as `key: value`. Keys are
lower-cased; a value YAML reads as a list (`argument-hint: [message]`) stays a list.
"""

from __future__ import annotations

import re
from typing import Any

_TOP_LEVEL_COMMA = re.compile(r",\s*(?![^()]*\))")  # a comma outside parentheses


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(front matter, body); a file without front matter is all body. Raises `ValueError`
    when a `---` block is opened and never closed."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text.lstrip("\ufeff")
    end = next((i for i, line in enumerate(lines[1:], start=1) if line.strip() == "---"), None)
    if end is None:
        raise ValueError("front matter opened with --- is never closed")
    block = "\n".join(lines[1:end])
    import yaml  # only a file with front matter needs it (it costs a start-up some 10 ms)

    try:
        data = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError:
        data = _lines(block)
    if not isinstance(data, dict):
        raise ValueError("the front matter is not a list of `key: value` lines")
    return {str(key).strip().lower(): value for key, value in data.items()}, "\n".join(
        lines[end + 1 :]
    )


def text_value(meta: dict[str, Any], key: str) -> str:
    """A value as one line of text: a YAML list (`[message]`) is shown as it was written."""
    value = meta.get(key)
    if value is None:
        return ""
    if isinstance(value, list):
        return "[" + ", ".join(str(item) for item in value) + "]"
    return " ".join(str(value).split())


def list_value(meta: dict[str, Any], key: str) -> tuple[str, ...]:
    """A list value: a YAML list, or one string with the items between commas (Claude Code's
    `allowed-tools: Bash(git add:*), Read`; commas inside parentheses belong to the item)."""
    value = meta.get(key)
    if value is None:
        return ()
    items = value if isinstance(value, list) else _TOP_LEVEL_COMMA.split(str(value))
    return tuple(text for item in items if (text := str(item).strip()))


def _lines(block: str) -> dict[str, str]:
    meta: dict[str, str] = {}
    for line in block.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            meta[key.strip()] = value.strip().strip("\"'")
    return meta
