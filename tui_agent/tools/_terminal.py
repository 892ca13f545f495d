"""A front end's terminal, where `shell` runs its commands when one is offered (an editor over
ACP offers `terminal/*`): the editor starts the process and shows its output live in the tool
call, and the tool waits for it, kills it on timeout or cancel, and reads what it printed.

The command the editor is given is the one the tool would run itself: the sandbox's command line
(`Sandbox.argv`), behind `env -u` for every key variable, since the editor starts it with its
own environment, which may still hold them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from tui_agent.vocab import TerminalOutput


class EditorTerminal(Protocol):
    """Terminals as a front end runs them; `call_id` names the tool call that shows one."""

    async def create(
        self, call_id: str, argv: Sequence[str], cwd: Path, env: Mapping[str, str]
    ) -> str:
        """Start `argv` in a new terminal; returns its id. Raises `OSError` when refused."""
        ...

    async def wait_for_exit(self, terminal_id: str) -> None: ...

    async def kill(self, terminal_id: str) -> None: ...

    async def output(self, terminal_id: str) -> TerminalOutput: ...

    async def release(self, terminal_id: str) -> None: ...
