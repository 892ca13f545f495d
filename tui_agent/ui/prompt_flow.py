"""The prompt's flows: what Enter does with the draft, and how the draft is helped along.

Enter sends (`send`): a slash command runs, an unknown `/word` is refused locally, a custom
command's template is expanded, `!command` runs in the workspace shell (its output goes with the
next prompt), and the files the draft mentions with `@` are attached. Around it: the slash and
`@path` completion lists, prompt history (Up/Down, Ctrl+R), the external editor (Ctrl+G) and the
editing of a queued prompt, held out of the queue meanwhile (`HeldPrompt`). The app routes the
prompt's messages here; the loop is reached through the app's tasks (`TuiAgentApp._call`).
"""

from __future__ import annotations

from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.widgets import TextArea

from tui_agent.lazy_dataclass import dataclass
from tui_agent.ui import commands
from tui_agent.ui.custom_run import send_custom
from tui_agent.ui.mcp_prompts import (
    prompt_commands,
    resource_attachments,
    resource_completions,
    send_prompt,
)
from tui_agent.ui.prompt_power import unresolved_note
from tui_agent.ui.widgets.prompt_input import PromptInput, unfolded
from tui_agent.ui.widgets.queue_pane import QueuePane

if TYPE_CHECKING:
    from tui_agent.ui.app import TuiAgentApp
    from tui_agent.vocab import ImagePart, PromptDraft


@dataclass
class HeldPrompt:
    """A queued prompt taken out of the queue while the person edits it."""

    text: str
    place: int  # its index in the queue when it was taken out
    sent: bool = False  # it had entered a turn before it could be taken out


class PromptFlow:
    """The prompt's flows for one app (see the module)."""

    def __init__(self, app: TuiAgentApp) -> None:
        self.app = app
        self.editing: HeldPrompt | None = None  # a queued prompt taken out to be edited
        self._in_editor = False  # Ctrl+G's editor runs (one at a time)

    def send(
        self,
        draft: PromptDraft,
        *,
        steer: bool,
        typed: PromptDraft | None = None,
        allowed_tools: tuple[str, ...] | None = None,
        model: str | None = None,
    ) -> None:
        """Send `draft`: the files it mentions (outside its pastes) and `!` outputs attached.
        `typed` is what the person typed, when it is not `draft` (a custom command's, whose
        `allowed_tools` limit its turn and whose `model` runs it)."""
        typed = typed or draft
        if "@" not in draft.text and not self.app.power.pending:
            self.submit(
                unfolded(draft), steer=steer, draft=typed, allowed_tools=allowed_tools, model=model
            )
        else:
            self.app._call(
                self._send_with_context(draft, steer, typed, allowed_tools, model),
                "reading the mentioned files",
            )

    async def _send_with_context(
        self,
        draft: PromptDraft,
        steer: bool,
        typed: PromptDraft,
        allowed_tools: tuple[str, ...] | None = None,
        model: str | None = None,
    ) -> None:
        from tui_agent.session import limits_for  # images and mentions load at the first prompt

        words = unfolded(draft)
        info = self.app.loop.info
        resources, unread = await resource_attachments(self.app.loop.mcp_offers(), draft.text)
        ready = await self.app.power.prepare(
            Path(info.workspace),
            words,
            mentions_in=draft.text,
            limits=limits_for(info.provider),
            extra=resources,
            problems=unread,
        )
        if ready.problems:
            # Not sent: a question about a picture the model cannot see would waste the turn.
            for problem in ready.problems:
                self.app.vm.add_marker("warning", f"not sent: {problem}")
            if not self.app.prompt_input.text:
                self.app.prompt_input.load_draft(typed)
            return
        if ready.unresolved:
            self.app.vm.add_marker("info", unresolved_note(ready.unresolved))
        self.submit(
            ready.text,
            steer=steer,
            words=words,
            draft=typed,
            images=ready.images,
            allowed_tools=allowed_tools,
            model=model,
        )

    def submit(
        self,
        text: str,
        *,
        steer: bool,
        words: str | None = None,
        draft: PromptDraft | None = None,
        images: tuple[ImagePart, ...] = (),
        allowed_tools: tuple[str, ...] | None = None,
        model: str | None = None,
    ) -> None:
        self.remember(text if words is None else words)
        self.app.transcript.action_follow()
        sent = self.app.loop.submit(
            text,
            steer_if_active=steer,
            draft=draft,
            images=images,
            allowed_tools=allowed_tools,
            model=model,
        )
        self.app._call(self._refusal_said(sent), "submit")

    async def _refusal_said(self, sent: Awaitable[object]) -> None:
        """A prompt whose model cannot be used was not queued: a warning says why."""
        from tui_agent.loop.api import ModelRefused

        try:
            await sent
        except ModelRefused as refused:
            self.app.vm.add_marker("warning", f"not sent: {refused}")

    def paste_image(self) -> None:
        self.app._call(self._paste_image(), "pasting the clipboard's image")

    async def _paste_image(self) -> None:
        """Ctrl+V: the clipboard's image; without one, the text copied in the app (TextArea's
        own Ctrl+V)."""
        from tui_agent.session import limits_for

        if await self.app.power.paste_image(limits_for(self.app.loop.info.provider)):
            return
        if self.app.clipboard:
            self.app.prompt_input.action_paste()
        else:
            self.app.vm.add_marker(
                "warning", "no image on the clipboard (it is read with wl-paste or xclip)"
            )

    def remember(self, typed: str) -> None:
        """Keep what the person typed for Up/Down and Ctrl+R, in memory and on disk."""
        self.app.vm.remember_prompt(typed)
        if self.app.prompt_input.prompt_history is not self.app.vm.history:
            self.app.prompt_input.prompt_history.append(typed)
        self.app.power.remember(typed)

    def submitted(self, message: PromptInput.Submitted) -> None:
        # The input was cleared when Enter was pressed: what is typed since is the next prompt.
        text = message.text
        chosen = self.app.completion.chosen if message.completing else None
        self.hide_completion()
        if chosen is not None and not isinstance(commands.parse(text), tuple):
            text = f"/{chosen.name}"
        if self.editing is not None:
            self.leave_edit(text)
            return
        if text.startswith("!") and text[1:].strip():
            self.remember(text)
            self.app._call(self._run_bang(text[1:].strip()), "!command")
            return
        parsed = commands.parse(text, self._commands())
        if isinstance(parsed, commands.UnknownCommand):
            self.app.transcript.action_follow()
            self.app.vm.add_marker("warning", parsed.message())
        elif parsed is not None and parsed[0].custom is not None:
            send_custom(
                self.app, parsed[0].custom, parsed[1], steer=message.steer, typed=message.draft
            )
        elif parsed is not None and parsed[0].mcp_prompt is not None:
            filled = send_prompt(
                self.app, parsed[0].mcp_prompt, parsed[1], steer=message.steer, draft=message.draft
            )
            self.app._call(filled, "asking the MCP server for its prompt")
        elif parsed is not None:
            self.app.run_slash(parsed[0].name, parsed[1])
        else:
            self.send(message.draft, steer=message.steer)

    async def _run_bang(self, command: str) -> None:
        self.app.transcript.action_follow()
        if self.app.power.shell_running:
            self.app.vm.add_marker("warning", "a ! command is still running (Esc stops it)")
            return
        row, status = await self.app.power.run_shell(self.app.loop.info, command)
        self.app.look.refresh_git()  # `!git switch` and the like change what the status bar shows
        self.app.vm.add_marker("info", "its output goes with your next prompt")
        # Logged as its row shows it, so a resumed transcript and an export include it.
        await self.app.loop.record_user_command(command, row.output, status)

    def input_changed(self, message: TextArea.Changed) -> None:
        if not self.app.prompt_input.is_attached:
            return  # a change that arrives while the app shuts down
        text = self.app.prompt_input.text
        self._update_mentions()
        if text.startswith("/") and " " not in text and "\n" not in text:
            shown = self.app.completion.filter(text, self._commands())
            self.app.completion.display = shown
            self.app.prompt_input.completion_open = shown
        elif self.app.completion.display:
            self.hide_completion()
        self.app._sync_footer()

    def completion_move(self, message: PromptInput.CompletionMove) -> None:
        if message.key == "tab":
            chosen = self.app.completion.chosen
            if chosen is not None:
                self.app.prompt_input.load_text(
                    f"/{chosen.name}"
                    + (" " if chosen.args or chosen.custom or chosen.mcp_prompt else "")
                )
                self.app.prompt_input.move_cursor(self.app.prompt_input.document.end)
        else:
            self.app.completion.move(-1 if message.key == "up" else 1)

    def _commands(self) -> tuple[commands.SlashCommand, ...]:
        """The user's commands, then the MCP servers' prompts (as they list them now)."""
        return (*self.app.power.commands, *prompt_commands(self.app.loop.mcp_offers()))

    def _update_mentions(self) -> None:
        row, column = self.app.prompt_input.cursor_location
        line = self.app.prompt_input.document.get_line(row)[:column]
        query = self.app.power.mention_at(line)
        if query is not None:
            offered = resource_completions(self.app.loop.mcp_offers(), query)
            offered += self.app.power.complete(query)
        shown = query is not None and self.app.paths.show_paths(offered)
        self.app.paths.display = shown
        self.app.prompt_input.mention_open = shown

    def mention_move(self, message: PromptInput.MentionMove) -> None:
        if message.key in ("up", "down"):
            self.app.paths.move(-1 if message.key == "up" else 1)
            return
        chosen = self.app.paths.chosen
        if chosen is None:
            return
        row, column = self.app.prompt_input.cursor_location
        line = self.app.prompt_input.document.get_line(row)[:column]
        query = self.app.power.mention_at(line) or ""
        start = (row, column - len(query))
        path = f'"{chosen}"' if " " in chosen else chosen
        self.app.prompt_input.replace(
            path + ("" if chosen.endswith("/") else " "), start, (row, column)
        )
        self._update_mentions()  # a folder stays open to go deeper

    def history_search(self) -> None:
        from tui_agent.ui.history_search import HistorySearch

        def chosen(prompt: str | None) -> None:
            if prompt is not None:
                self.app.prompt_input.load_text(prompt)
                self.app.prompt_input.move_cursor(self.app.prompt_input.document.end)
            self.app.prompt_input.focus()

        self.app.push_screen(HistorySearch(self.app.prompt_input.prompt_history), callback=chosen)

    def editor(self) -> None:
        # A task, not awaited here: the app's own messages (the turn's events) go on meanwhile.
        if not self._in_editor:
            self._in_editor = True
            self.app._call(self._edit_draft(), "the editor")

    async def _edit_draft(self) -> None:
        from tui_agent.ui.editor import edit_in_editor

        draft = unfolded(self.app.prompt_input.draft())
        try:
            edited = await edit_in_editor(self.app, draft)
        except (OSError, RuntimeError) as exc:
            self.app.vm.add_marker("warning", f"the editor failed ({exc}); the draft is unchanged")
            return
        finally:
            self._in_editor = False
        self.app.prompt_input.load_text(edited)
        self.app.prompt_input.move_cursor(self.app.prompt_input.document.end)

    def hide_completion(self) -> None:
        self.app.completion.display = False
        self.app.prompt_input.completion_open = False

    def edit_queued(self, message: QueuePane.EditRequested) -> None:
        """Edit a queued prompt, held out of the queue meanwhile: a turn that ends during the
        edit does not send the old text, and the saved text goes back in its place. The input
        takes the text at once (keys typed right after Enter edit it); the loop lets go of the
        prompt in a task."""
        prompts = [row.prompt_id for row in self.app.vm.queue if row.prompt_id is not None]
        if message.prompt_id not in prompts or self.editing is not None:
            return
        held = HeldPrompt(message.text, prompts.index(message.prompt_id))
        self.editing = held
        self.app.prompt_input.load_text(message.text)
        self.app.prompt_input.move_cursor(self.app.prompt_input.document.end)
        self.app.prompt_input.border_title = (
            "editing a queued prompt (held out of the queue): Enter saves, Esc keeps it as it was"
        )
        self.app.prompt_input.add_class("-editing")
        self.app.prompt_input.focus()
        self.app._sync_footer()
        self.app._call(self._take_out(message.prompt_id, held), "edit")

    async def _take_out(self, prompt_id: str, held: HeldPrompt) -> None:
        queued = [q.prompt_id for q in self.app.loop.snapshot().queue]
        # No await between this check and the cancel: a prompt that has entered a turn is
        # never cancelled (that would cancel the turn).
        if prompt_id in queued and await self.app.loop.cancel(prompt_id):
            return
        held.sent = True
        self.app.vm.add_marker(
            "info", "that prompt had already gone into the turn: Enter sends your edit as a new one"
        )

    def leave_edit(self, saved: str | None = None) -> None:
        """Put the held prompt back in its place in the queue: the saved text, else the old
        (one that went into a turn meanwhile: only a saved edit, as a new prompt)."""
        held, self.editing = self.editing, None
        self.app.prompt_input.border_title = None
        self.app.prompt_input.remove_class("-editing")
        if saved is None:
            self.app.prompt_input.clear_input()
        if held is not None and (saved is not None or not held.sent):
            self.app._call(
                self._requeue(saved or held.text, None if held.sent else held.place), "edit"
            )
        self.app._sync_footer()

    async def _requeue(self, text: str, place: int | None) -> None:
        handle = await self.app.loop.submit(text)
        queued = [q.prompt_id for q in self.app.loop.snapshot().queue]
        if place is not None and handle.id in queued and queued.index(handle.id) > place:
            await self.app.loop.move_queued(handle.id, place - queued.index(handle.id))
            self.app.vm.sync_queue(self.app.loop.snapshot())
