"""The user's prompts per workspace, kept across sessions for Up/Down and Ctrl+R.

One JSON line per prompt in `history/<workspace key>.jsonl` under the data directory, appended
as prompts are sent. Reading keeps the newest `limit` prompts, without a prompt repeated right
after itself; a damaged line is skipped.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from tui_agent.session._paths import AppPaths

HISTORY_LIMIT = 1000


class PromptHistory:
    def __init__(self, workspace: Path, paths: AppPaths | None = None) -> None:
        key = hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:16]
        self.path = (paths or AppPaths.from_env()).data_dir / "history" / f"{key}.jsonl"

    def load(self, limit: int = HISTORY_LIMIT) -> list[str]:
        """The newest `limit` prompts, oldest first."""
        try:
            lines = self.path.read_bytes().splitlines()
        except OSError:
            return []
        prompts: list[str] = []
        for line in lines:
            try:
                text = json.loads(line).get("text")
            except (ValueError, AttributeError):
                continue
            if isinstance(text, str) and text and (not prompts or prompts[-1] != text):
                prompts.append(text)
        return prompts[-limit:]

    def append(self, text: str) -> None:
        if not text.strip():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"text": text, "ts": round(time.time(), 3)}, ensure_ascii=False)
        with self.path.open("a", encoding="utf-8") as file:
            file.write(line + "\n")
