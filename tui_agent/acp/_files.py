"""The client's files: when an ACP client offers `fs/read_text_file` and `fs/write_text_file`,
the file tools read and write through it, so the model sees unsaved editor buffers and its
edits land in the editor (which shows and saves them).

A read the client refuses (no such file, for one) counts as no file; a write it refuses is a
tool error the model reads. The session id is known once the loop is open, before any prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp import Client, RequestError


class ClientFiles:
    def __init__(self, client: Client) -> None:
        self._client = client
        self.session_id = ""

    async def read_text(self, path: Path) -> str | None:
        try:
            answer = await self._client.read_text_file(session_id=self.session_id, path=str(path))
        except RequestError:
            return None
        return str(answer.content)

    async def write_text(self, path: Path, text: str) -> None:
        try:
            await self._client.write_text_file(
                session_id=self.session_id, path=str(path), content=text
            )
        except RequestError as error:
            raise OSError(f"the editor refused to write {path}: {error}") from error


def offers_files(capabilities: Any) -> bool:
    """Whether the client said it reads and writes text files for the agent."""
    fs = getattr(capabilities, "fs", None)
    return bool(fs and fs.read_text_file and fs.write_text_file)
