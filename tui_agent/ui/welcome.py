"""What a new session says first: the welcome block (where, which model, which approval mode,
which keys) and, without an API key, the demo notice."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_agent.loop.api import LoopInfo


DEMO_NOTICE = (
    "Demo mode: no API key is configured, so a built-in scripted model answers. "
    "Set OPENAI_API_KEY or ANTHROPIC_API_KEY (or pass --provider) to use a real model. "
    "/help lists the keys and commands."
)
WELCOME_KEYS = (
    "Enter send · Shift+Enter newline · Ctrl+S steer · Esc cancel · "
    "Shift+Tab approval mode · /help keys and commands"
)


def welcome_text(info: LoopInfo) -> str:
    """The first block of a new session: where, which model, which approval mode, which keys."""
    home = str(Path.home())
    folder = info.workspace
    if folder == home or folder.startswith(home + os.sep):
        folder = "~" + folder[len(home) :]
    return (
        f"tui-agent in {folder}\n"
        f"model {info.provider}/{info.model} · approval {info.approval_mode}\n"
        f"{WELCOME_KEYS}"
    )
