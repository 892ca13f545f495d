"""The client's terminals: when an ACP client says it offers `terminal/*`, `shell` runs its
commands there (`terminal/create`, then `wait_for_exit`, `kill` on timeout or cancel,
`output`, `release`), and the call's card embeds the terminal, so the editor shows the output
live. The command it gets is the sandboxed command line the tool would have run itself.

A refusal from the client is an `OSError` the tool reports to the model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from acp import Client, RequestError
from acp import schema as acp

from tui_agent.vocab import TerminalOutput

OUTPUT_BYTE_LIMIT = 1_000_000  # what the client keeps of a command's output (its end)


class ClientTerminal:
    def __init__(self, client: Client) -> None:
        self._client = client
        self.session_id = ""
        # Tells the session which terminal a call shows (it sends the card's update, in order).
        self.shown: Callable[[str, str], None] = lambda call_id, terminal_id: None

    async def create(
        self, call_id: str, argv: Sequence[str], cwd: Path, env: Mapping[str, str]
    ) -> str:
        try:
            answer = await self._client.create_terminal(
                session_id=self.session_id,
                command=argv[0],
                args=list(argv[1:]),
                env=[acp.EnvVariable(name=name, value=value) for name, value in env.items()],
                cwd=str(cwd),
                output_byte_limit=OUTPUT_BYTE_LIMIT,
            )
        except RequestError as error:
            raise OSError(str(error)) from error
        self.shown(call_id, answer.terminal_id)
        return answer.terminal_id

    async def wait_for_exit(self, terminal_id: str) -> None:
        await self._client.wait_for_terminal_exit(
            session_id=self.session_id, terminal_id=terminal_id
        )

    async def kill(self, terminal_id: str) -> None:
        await self._client.kill_terminal(session_id=self.session_id, terminal_id=terminal_id)

    async def output(self, terminal_id: str) -> TerminalOutput:
        answer = await self._client.terminal_output(
            session_id=self.session_id, terminal_id=terminal_id
        )
        status = answer.exit_status
        return TerminalOutput(
            text=answer.output,
            truncated=answer.truncated,
            exit_code=status.exit_code if status else None,
            signal=status.signal if status else None,
        )

    async def release(self, terminal_id: str) -> None:
        try:
            await self._client.release_terminal(session_id=self.session_id, terminal_id=terminal_id)
        except RequestError as error:
            raise OSError(str(error)) from error


def offers_terminal(capabilities: Any) -> bool:
    """Whether the client said it runs `terminal/*` for the agent."""
    return bool(getattr(capabilities, "terminal", False))
