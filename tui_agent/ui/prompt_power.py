"""The prompt's extras for one workspace: custom commands, history kept on disk, `@` mentions
over a file index, images (mentioned, pasted as a path, or from the clipboard), and `!`
commands whose output goes with the next prompt.

The app owns one `PromptPower` and calls it from its input handlers; everything slow (reading
command files and history, listing the workspace, reading mentioned files, running a command)
runs off the event loop.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.lazy_dataclass import dataclass
from tui_agent.session import PromptHistory, load_custom_commands
from tui_agent.ui.commands import SlashCommand, custom_commands
from tui_agent.ui.opening import import_off_loop
from tui_agent.ui.state import ToolBlock
from tui_agent.ui.view_model import ViewModel

if TYPE_CHECKING:  # mentions, images and `!` load at first use (with pydantic, after the frame)
    from tui_agent.loop.api import LoopInfo
    from tui_agent.session import Attachment, FileIndex, ImageLimits
    from tui_agent.vocab import AbortSignal, ImagePart, ToolStatus

MENTION_AT_CURSOR = re.compile(r'(?:^|(?<=\s))@(?P<query>[^\s"@]*)$')


SUCCESS_LINE = "Exit code: 0"  # the shell's last line for a command that succeeded
NOTE_NAMES = 5  # unresolved mentions named in the note; more are counted


def unresolved_note(mentions: Sequence[str]) -> str:
    """The dim line that says which `@words` went as text (a decorator, a package, a handle)."""
    named = ", ".join(f"@{m}" for m in mentions[:NOTE_NAMES])
    more = f" and {len(mentions) - NOTE_NAMES} more" if len(mentions) > NOTE_NAMES else ""
    return f"sent as text, not attached (no such file in the workspace): {named}{more}"


@dataclass(frozen=True)
class Prepared:
    """A prompt ready to send, or the reasons it is not (`problems`: images refused)."""

    text: str
    images: tuple[ImagePart, ...]
    unresolved: tuple[str, ...]  # `@words` that are no path: sent as the text they are
    problems: tuple[str, ...]


class PromptPower:
    def __init__(self, vm: ViewModel) -> None:
        self.vm = vm
        self.commands: tuple[SlashCommand, ...] = ()
        self.index: FileIndex | None = None
        # `!` outputs and pasted images waiting for the next prompt
        self.pending: list[Attachment] = []
        self._history: PromptHistory | None = None
        self._shell: AbortSignal | None = None
        self._listing: asyncio.Task[None] | None = None  # held: a task nobody holds may vanish
        self._closed = False

    def start(self, workspace: Path) -> None:
        """A new loop in `workspace`: prompts are remembered from now on (cheap, at once)."""
        self._history = PromptHistory(workspace)
        self.pending = []

    async def open(self, workspace: Path) -> list[str]:
        """Read the workspace's commands and history, start listing its files; returns the
        prompt history (oldest first)."""
        # Both run through the tools layer (ripgrep; skills are its `Skill`s), which loads
        # pydantic: imported off the event loop.
        await import_off_loop("tui_agent.session._file_index", "tui_agent.session._skills")
        from tui_agent.session import FileIndex, available_skills, skill_commands

        found, problems = await asyncio.to_thread(load_custom_commands, workspace)
        # --yolo trusts what the repository brings: its skills are commands too.
        yolo = self.vm.status.approval_mode == "yolo"
        offered = await asyncio.to_thread(available_skills, workspace, trust_all=yolo)
        self.commands = custom_commands([*found, *skill_commands(offered, {c.name for c in found})])
        for problem in problems:
            self.vm.add_marker("warning", f"custom command {problem.path}: {problem.message}")
        if await asyncio.to_thread(workspace.is_dir) and not self._closed:
            # (a replayed scene's workspace may not exist; a closed app lists nothing)
            self.index = FileIndex(workspace)
            self._listing = asyncio.create_task(self._list_files(self.index), name="file-index")
        history = self._history
        return [] if history is None else await asyncio.to_thread(history.load)

    async def _list_files(self, index: FileIndex) -> None:
        try:
            await index.load()
        except Exception as exc:  # @ completion is a convenience: say why it is missing
            self.vm.add_marker("warning", f"cannot list the workspace for @ completion: {exc}")

    async def close(self) -> None:
        """The app is ending: stop the listing and any `!` command, and wait for the listing.

        Nothing of ours may still be starting a process when `asyncio.run` cancels every task
        at exit: on Python 3.11 a process whose pipes are being connected at that moment is
        never reported as ended, and the exit hangs (CPython issue 125502)."""
        self._closed = True
        self.stop_shell()
        listing, self._listing = self._listing, None
        if listing is not None:
            listing.cancel()
            await asyncio.gather(listing, return_exceptions=True)

    def remember(self, words: str) -> None:
        if self._history is not None:
            history = self._history
            asyncio.get_running_loop().run_in_executor(None, history.append, words)

    # -- @ mentions ------------------------------------------------------------------------------

    def mention_at(self, before_cursor: str) -> str | None:
        """The `@query` being typed at the cursor, or None."""
        match = MENTION_AT_CURSOR.search(before_cursor)
        return None if match is None else match.group("query")

    def complete(self, query: str) -> list[str]:
        if self.index is None or not self.index.ready.is_set():
            return []
        return self.index.match(query)

    async def prepare(
        self,
        workspace: Path,
        words: str,
        *,
        mentions_in: str,
        limits: ImageLimits,
        extra: Sequence[Attachment] = (),
        problems: Sequence[str] = (),
    ) -> Prepared:
        """The text to send for `words`: the files, folders and images that `mentions_in` (the
        words as typed, pastes still folded) mentions, the pasted images and the `!` outputs,
        attached; the images themselves beside it. Also the mentions that are no path in the
        workspace (`@dataclass`, `@types/node`): they stay in the words as the plain text they
        are. An image that cannot be attached leaves everything pending: nothing is sent."""
        from tui_agent.session import attach, images_of, read_mentions

        mentions = await read_mentions(workspace, mentions_in, limits)
        # `extra`, `problems`: what was read for other mentions (an MCP server's `@server:uri`)
        # and what of them could not be.
        taken = {attachment.source.removeprefix("@") for attachment in extra}
        missing = tuple(mention for mention in mentions.missing if mention not in taken)
        if mentions.problems or problems:
            return Prepared("", (), missing, (*mentions.problems, *problems))
        attached = [*mentions.attachments, *extra, *self.pending]
        self.pending = []
        return Prepared(attach(words, attached), images_of(attached), missing, ())

    async def paste_image(self, limits: ImageLimits) -> bool:
        """Ctrl+V: the clipboard's image goes with the next prompt (a chip in the transcript);
        a line says so, or why not. False: the clipboard holds no image (or no tool reads it)."""
        from tui_agent.session import (
            ImageError,
            clipboard_image,
            image_attachment,
            image_from_bytes,
        )

        data = await asyncio.to_thread(clipboard_image)
        if data is None:
            return False
        try:
            image = await asyncio.to_thread(image_from_bytes, data, "clipboard", limits)
        except ImageError as exc:
            self.vm.add_marker("warning", f"the clipboard's image is not attached: {exc}")
            return True
        self.pending.append(image_attachment("clipboard image", image))
        self.vm.add_marker(
            "info", f"the clipboard's image ({image.details}) goes with your next prompt"
        )
        return True

    # -- ! commands ------------------------------------------------------------------------------

    @property
    def shell_running(self) -> bool:
        return self._shell is not None

    def stop_shell(self) -> None:
        if self._shell is not None:
            self._shell.abort("stopped by the user")

    async def run_shell(self, info: LoopInfo, command: str) -> tuple[ToolBlock, ToolStatus]:
        """Run `!command` (in the loop's sandbox), show its output as it comes, keep it for the
        next prompt; returns its row as it ended, and its status."""
        block, status, done = await self._run_shell(info, command)
        if done is not None:
            self.pending.append(done)
        return block, status

    async def command_output(self, info: LoopInfo, command: str) -> str:
        """Run a custom command's `` !`cmd` `` like `!command` (shown as its row); its output
        goes into that command's prompt, not with the next one (a success's exit line left
        out: the prompt reads as its author wrote it)."""
        block, _, done = await self._run_shell(info, command)
        if done is None:
            return block.output
        return (
            done.text.removesuffix(SUCCESS_LINE).rstrip("\n") if done.exit_code == 0 else done.text
        )

    async def _run_shell(
        self, info: LoopInfo, command: str
    ) -> tuple[ToolBlock, ToolStatus, Attachment | None]:
        from tui_agent.session import run_user_shell
        from tui_agent.vocab import AbortSignal, tool_status

        block = self.vm.add_user_command(command)
        self._shell = signal = AbortSignal()
        try:
            done = await run_user_shell(
                Path(info.workspace),
                command,
                signal,
                lambda text: self.vm.user_command_output(block, text),
                sandbox=info.sandbox,
            )
        except Exception as exc:
            self.vm.user_command_output(block, f"cannot run it: {exc}", state="failed")
            return block, "failed", None
        finally:
            self._shell = None
        # The one tool-status rule, read from the exit code and whether the person stopped it.
        status = tool_status(
            is_error=done.exit_code != 0, outcome="aborted" if signal.aborted else None
        )
        self.vm.user_command_output(block, done.text, state=status, exit_code=done.exit_code)
        return block, status, done
