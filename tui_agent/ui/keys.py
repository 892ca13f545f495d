"""Key names made canonical before any widget sees them.

Terminals report a modified Enter in three ways, and Textual names only one of them well:

- kitty's protocol (`ESC [13;2u`): Textual says `shift+enter`;
- xterm's modifyOtherKeys and tmux's extended keys (`ESC [27;2;13~`): Textual's parser reads the
  code point as the key and says `shift+\\r` (`ctrl+\\r`; Alt alone gives a bare `\\r`);
- Alt+Enter in a legacy terminal is `ESC` `CR`, which Textual reports as a plain `enter` once the
  escape delay has passed, losing the Alt.

`canonical_key` renames the second form; `register_sequences` teaches Textual's sequence table the
third (read at once, with no escape delay). The app calls both, so bindings and the prompt only
ever see `shift+enter`, `ctrl+enter` and `alt+enter`.
"""

from __future__ import annotations

import enum

from tui_agent.ui._textual_hooks import add_key_sequence

_ESC_CR = "\x1b\r"


class ExtraKey(enum.Enum):
    """Key names for sequences Textual's table lacks (the table reads each value's `.value`)."""

    ALT_ENTER = "alt+enter"


def register_sequences() -> None:
    """Add Alt+Enter (`ESC CR`) to Textual's table of sequences; idempotent."""
    add_key_sequence(_ESC_CR, ExtraKey.ALT_ENTER)


def canonical_key(key: str) -> str:
    """`shift+\\r` → `shift+enter`; a bare `\\r` (Alt with modifyOtherKeys) → `alt+enter`."""
    head, _, last = key.rpartition("+")
    if last != "\r":
        return key
    return f"{head}+enter" if head else "alt+enter"
