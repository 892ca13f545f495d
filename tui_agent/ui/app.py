"""The full-screen app: its lifecycle (the loop attached, swapped, detached), the keys it owns,
and the routing of widget messages to the parts that handle them.

The loop is reached only through `LoopApi`. Its events never touch a widget from inside the
loop: the subscriber only queues them and posts one message into Textual's queue; the handler
applies what has gathered to the view model, and the panes and the transcript, which listen to
the view model themselves, draw the changes from their own queues. A failure in that handling
becomes an error notice (a line in the transcript, a toast, the log), never a crash and never a
silent loss. Loop calls run as tasks so no handler waits on the loop. The footer greys what does
not apply (`check_action`).

The parts: `MainScreen` composes the layout; `trust_screen` (asked before the first loop
opens), `prompt_flow` (Enter, completion, mentions, `!`, the editor, a held queued prompt),
`approvals`, `notifications`, `commands` and `slash_commands` (a table of objects), `key_actions`
(Esc, Ctrl+C, the copy keys); the app keeps the bindings and routes each action to its part.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.driver import Driver
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, TextArea

from tui_agent.session import LoopSetupError
from tui_agent.ui import commands, slash_commands
from tui_agent.ui.approvals import ApprovalFlow
from tui_agent.ui.hooks import Appearance, SessionHooks
from tui_agent.ui.key_actions import KeyActions
from tui_agent.ui.keys import canonical_key, register_sequences
from tui_agent.ui.look import Look
from tui_agent.ui.main_screen import MainScreen
from tui_agent.ui.notifications import call_back
from tui_agent.ui.opening import OpeningLoop, import_off_loop
from tui_agent.ui.prompt_flow import PromptFlow
from tui_agent.ui.prompt_power import PromptPower
from tui_agent.ui.styles import stylesheet_paths
from tui_agent.ui.view_model import ViewModel
from tui_agent.ui.welcome import DEMO_NOTICE, welcome_text
from tui_agent.ui.widgets.approval_bar import ApprovalBar
from tui_agent.ui.widgets.blocks import ShowSubagent
from tui_agent.ui.widgets.find_bar import FindBar
from tui_agent.ui.widgets.pane import FollowsViewModel
from tui_agent.ui.widgets.prompt_input import PromptInput
from tui_agent.ui.widgets.queue_pane import QueuePane
from tui_agent.ui.widgets.tools_pane import ToolsPane
from tui_agent.ui.widgets.transcript import Transcript

if TYPE_CHECKING:  # the loop's types; `long_session` imports them
    from tui_agent.loop.api import LoopApi
    from tui_agent.loop.events import LoopEvent
    from tui_agent.ui.long_session import Preloaded

DIALOG_ACTIONS = frozenset({"quit_app", "interrupt", "copy_selection", "inspect"})

_log = logging.getLogger(__name__)


class _Pending(Message):
    """Loop events or view-model changes are waiting to be shown (see `_show_pending`)."""


class TuiAgentApp(App[None]):
    TITLE = "tui-agent"
    CSS_PATH: ClassVar[list[str | Any]] = [str(p) for p in stylesheet_paths()]
    ENABLE_COMMAND_PALETTE = True
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit_app", "Quit", priority=True),
        Binding("escape", "cancel_turn", "Cancel", priority=True),
        Binding("escape", "escape_idle", "Clear", priority=True),
        Binding("ctrl+c", "interrupt", "Cancel/Clear", priority=True, show=False),
        Binding("ctrl+shift+c", "copy_selection", "Copy", priority=True, show=False),
        Binding("shift+tab", "cycle_approval", "Mode", priority=True, show=False),
        Binding("ctrl+s", "steer", "Steer"),
        Binding("ctrl+t", "toggle_tools", "Tools", priority=True),
        Binding("ctrl+n", "toggle_queue", "Queue", priority=True),
        Binding("f2", "inspect", "Inspect", priority=True),
        Binding("ctrl+o", "toggle_last_tool", "Expand", show=False),
        Binding("ctrl+f", "find", "Find", priority=True, show=False),
    ]

    # What the footer greys follows these (see `check_action`): when one changes, it is redrawn.
    turn_running = var(False, bindings=True)
    can_steer = var(False, bindings=True)
    escape_closes = var(False, bindings=True)

    def __init__(
        self,
        loop: LoopApi,
        *,
        initial_prompt: str | None = None,
        hooks: SessionHooks | None = None,
        clock: Callable[[], float] = time.time,
        appearance: Appearance | None = None,
    ) -> None:
        super().__init__()
        register_sequences()
        self.loop = loop
        self.hooks = hooks or SessionHooks()
        self.clock = clock
        self.vm = ViewModel(loop.info, clock=clock)
        self._initial_prompt = initial_prompt
        self.setup_error: str | None = None  # why the loop could not be opened
        self._unsubscribe: Callable[[], None] | None = None
        self._events: list[LoopEvent] = []  # from the loop, not yet in the view model
        self._woken = False  # a `_Pending` message is on its way
        self._reported: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._confirming: tuple[str, float] | None = None  # a command that asked, and when
        # The screen composes the layout; these are its widgets, named for the flows that use them.
        self.main_screen = screen = MainScreen(self.vm)
        self.transcript = screen.transcript
        self.plan_pane = screen.plan_pane
        self.tools_pane = screen.tools_pane
        self.queue_pane = screen.queue_pane
        self.status_bar = screen.status_bar
        self.prompt_input = screen.prompt_input
        self.approval_bar = screen.approval_bar
        self.completion = screen.completion
        self.paths = screen.paths
        self.find_bar = screen.find_bar
        FollowsViewModel(self, self.vm, None, self._sync_footer)
        self.power = PromptPower(self.vm)
        self.prompt = PromptFlow(self)
        self.approvals = ApprovalFlow(self)
        self.keys = KeyActions(self)
        self.look = Look(self, appearance or Appearance())

    # ------------------------------------------------------------ lifecycle

    def get_default_screen(self) -> Screen[Any]:
        return self.main_screen

    def on_mount(self) -> None:
        self.look.follow_theme()
        self._attach_loop(self.loop)
        self.main_screen.fold(self.size.width)
        self.prompt_input.focus()
        self.call_after_refresh(self.main_screen.footer.after_keys_drawn, self._after_first_frame)

    def _after_first_frame(self) -> None:
        # Start-up objects (modules, styles, the first widgets) live as long as the app: keep
        # them out of every later collection, as Toad does, so GC pauses stay short; the command
        # line held collection off until now (`cli.main`).
        gc.freeze()
        gc.enable()
        self.look.start(Path(self.loop.info.workspace))
        if isinstance(self.loop, OpeningLoop):
            # Only now: loading the loop stack in its worker thread holds the GIL for most of a
            # second, and would have held the first frame back.
            self._call(self._open(self.loop), "start")
        elif self._initial_prompt:
            self.prompt.submit(self._initial_prompt, steer=False)

    async def _open(self, opening: OpeningLoop) -> None:
        """Attach the real loop once it is open; a setup error ends the app (exit status 2)."""
        await import_off_loop("tui_agent.ui.long_session", "tui_agent.ui.trust_screen")
        from tui_agent.ui.long_session import open_session  # the loop's types
        from tui_agent.ui.trust_screen import ask_trust  # a screen shown after the first frame

        try:
            await ask_trust(self)
            loop, preloaded = await open_session(opening.open(), self.vm, self.transcript)
        except LoopSetupError as exc:
            self.setup_error = str(exc)
            self.exit(return_code=2)
            return
        self._detach_loop()
        self._attach_loop(loop, preloaded)
        opening.attached(loop)
        if self._initial_prompt:
            self.prompt.submit(self._initial_prompt, steer=False)

    def _attach_loop(self, loop: LoopApi, preloaded: Preloaded | None = None) -> None:
        self.loop = loop
        transcript = loop.transcript()
        # The welcome heads a resumed transcript too: the screen as it was when it began.
        if preloaded is None:
            self.vm.reset(loop.info, transcript, loop.snapshot(), welcome=welcome_text(loop.info))
        else:  # replayed beforehand in slices, then what the loop said meanwhile (`long_session`)
            preloaded.hand_over(self.vm, loop.snapshot(), self._on_loop_event)
        self.vm.set_mcp(loop.mcp_servers())
        self.prompt_input.prompt_history = self.vm.history
        workspace = Path(loop.info.workspace)
        self.power.start(workspace)
        # Once the real loop is here (for the stand-in too, they slowed the opening); after a
        # frame: the file index imports the tools, which no frame must wait for.
        if not isinstance(loop, OpeningLoop):
            what = "loading the prompt extras"
            self.call_after_refresh(lambda: self._call(self._open_prompt_power(workspace), what))
        self._unsubscribe = loop.subscribe(self._on_loop_event)
        loop.answer_elicitations(self.approvals.elicit)
        if not transcript and loop.info.demo:
            self.vm.add_marker("notice", DEMO_NOTICE)
        for notice in loop.info.notices:
            self.vm.add_marker("notice", notice)

    async def _open_prompt_power(self, workspace: Path) -> None:
        history = await self.power.open(workspace)
        typed_meanwhile = [p for p in self.vm.history if p not in history]
        if history:
            self.prompt_input.prompt_history = history + typed_meanwhile

    def _detach_loop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    async def on_unmount(self) -> None:
        # The loop may outlive the screen (the command line closes it after the app exits).
        self._detach_loop()
        self.look.close()
        await self.power.close()

    async def on_event(self, event: events.Event) -> None:
        """Every key from the terminal passes here first: the screen and the transcript learn
        that the user is typing (`MainScreen`, `Transcript.typed`), its name is made canonical,
        and text typed while a widget that takes no text has focus (a side pane, a tool row,
        the transcript) goes to the prompt (focus moves before the key is forwarded, so a fast
        burst keeps its order)."""
        if isinstance(event, events.Key) and not event.is_forwarded:
            self.main_screen.key_pressed()
            self.transcript.typed()
            quiet = self.approvals.key_arrived()
            key = canonical_key(event.key)
            if self.approvals.took_letter(event):
                return
            if key != event.key:
                event.key, event.character = key, None
            elif event.is_printable and self._takes_no_text(self.focused):
                self.screen.remove_class("-show-tools", "-show-queue")
                self.screen.set_focus(self.prompt_input)
            elif (
                event.is_printable
                and self.focused is self.approval_bar
                and not self.approval_bar.takes(event.character or "", quiet=quiet)
            ):
                # The person is typing, not answering: the text and the keyboard go to the draft.
                self.prompt_input.display = True
                self.screen.set_focus(self.prompt_input)
                self.prompt_input.insert(event.character or "")
                return
            elif (
                key == "tab"
                and self.focused is self.prompt_input
                and self.approval_bar.display
                and not (self.completion.display or self.paths.display)
            ):
                self.approval_bar.focus()  # from the draft to the waiting question
                return
        await super().on_event(event)

    def _takes_no_text(self, widget: Widget | None) -> bool:
        """A widget of the main screen that a typed character would be lost in."""
        if self.screen is not self.main_screen or isinstance(widget, Input | TextArea):
            return False
        return widget is None or not (
            widget is self.approval_bar or self.approval_bar in widget.ancestors
        )

    def on_resize(self, event: events.Resize) -> None:
        self.main_screen.fold(event.size.width)

    # ------------------------------------------------------------ loop -> view model -> widgets

    def _on_loop_event(self, event: LoopEvent) -> None:
        """The loop's subscriber: runs inside the loop's emission, so it only queues."""
        self._events.append(event)
        self._wake()

    def _wake(self) -> None:
        if not self._woken:
            self._woken = True
            self.post_message(_Pending())

    @on(_Pending)
    def _show_pending(self) -> None:
        """Apply the queued loop events to the view model, then refresh each pane they touched
        once: a burst of events costs one pass. The panes and the transcript take the changes
        themselves and draw them from their own queues, so nothing here waits and keys are
        never held up."""
        self._woken = False
        events, self._events = self._events, []
        for event in events:
            try:
                self.vm.apply(event)
                call_back(self, event)
            except Exception as error:
                self._report_error(f"showing a {event.type} event failed", error)

    @on(Transcript.DrawFailed)
    def _on_draw_failed(self, message: Transcript.DrawFailed) -> None:
        self._report_error(message.what, message.error, marker=False)

    def _report_error(self, what: str, error: Exception, *, marker: bool = True) -> None:
        """A failure in the app's own handling: logged, shown as a toast and (unless drawing
        the transcript is what failed) a line in it; each distinct failure once."""
        text = f"{what}: {error!r}"
        _log.error("%s", text, exc_info=error)
        if text in self._reported:
            return
        self._reported.add(text)
        self.notify(text, title="Internal error", severity="error", timeout=10)
        if marker:
            self.vm.add_marker("error", text)

    def _sync_footer(self) -> None:
        """Tell the footer what it greys (see `check_action`); a var that changes redraws it."""
        if not self.main_screen.is_attached:
            return  # the app is shutting down: nothing left to draw
        self.turn_running = self.vm.busy
        self.can_steer = bool(self.prompt_input.text.strip()) and self.prompt_input.display
        self.escape_closes = self.keys.escape_has_local_target()

    # ------------------------------------------------------------ loop calls

    def _call(self, coro: Coroutine[Any, Any, Any], what: str) -> None:
        """Run a loop command as a task; a failure becomes a line in the transcript."""
        task = asyncio.create_task(coro)
        self._tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                self.vm.add_marker("error", f"{what} failed: {t.exception()}")

        task.add_done_callback(done)

    # ------------------------------------------------------------ input messages

    @on(PromptInput.Submitted)
    def _on_submitted(self, message: PromptInput.Submitted) -> None:
        self.prompt.submitted(message)

    @on(TextArea.Changed, "#input")
    def _on_input_changed(self, message: TextArea.Changed) -> None:
        self.prompt.input_changed(message)

    @on(PromptInput.CompletionMove)
    def _on_completion_move(self, message: PromptInput.CompletionMove) -> None:
        self.prompt.completion_move(message)

    @on(PromptInput.MentionMove)
    def _on_mention_move(self, message: PromptInput.MentionMove) -> None:
        self.prompt.mention_move(message)

    @on(PromptInput.HistorySearchRequested)
    def _on_history_search(self) -> None:
        self.prompt.history_search()

    @on(PromptInput.EditorRequested)
    def _on_editor(self) -> None:
        self.prompt.editor()

    @on(PromptInput.ImagePasteRequested)
    def _on_image_paste(self) -> None:
        self.prompt.paste_image()

    @on(QueuePane.EditRequested)
    def _on_edit_queued(self, message: QueuePane.EditRequested) -> None:
        self.prompt.edit_queued(message)

    @on(PromptInput.JumpToTail)
    def _on_jump_to_tail(self) -> None:
        self.transcript.action_follow()

    @on(PromptInput.JumpToTop)
    async def _on_jump_to_top(self) -> None:
        await self.transcript.action_top()

    @on(PromptInput.PageTranscript)
    async def _on_page_transcript(self, message: PromptInput.PageTranscript) -> None:
        await self.transcript.page(message.pages)

    # ------------------------------------------------------------ pane messages

    @on(ShowSubagent)
    async def _on_show_subagent(self, message: ShowSubagent) -> None:
        from tui_agent.ui.subagent_screen import show_subagent  # only when first wanted

        await show_subagent(self, message.call_id, message.title)

    @on(ToolsPane.CancelRequested)
    def _on_cancel_tool(self, message: ToolsPane.CancelRequested) -> None:
        self._call(self.loop.cancel_tool(message.call_id), "cancel tool")

    @on(QueuePane.RemoveRequested)
    def _on_remove_queued(self, message: QueuePane.RemoveRequested) -> None:
        self._call(self.loop.cancel(message.prompt_id), "remove")

    @on(QueuePane.SteerRequested)
    def _on_steer_queued(self, message: QueuePane.SteerRequested) -> None:
        self._call(self.loop.steer([message.prompt_id]), "steer")

    @on(QueuePane.MoveRequested)
    def _on_move_queued(self, message: QueuePane.MoveRequested) -> None:
        self._call(self._move(message.prompt_id, message.offset), "move")

    async def _move(self, prompt_id: str, offset: int) -> None:
        if await self.loop.move_queued(prompt_id, offset):
            self.vm.sync_queue(self.loop.snapshot())

    @on(ApprovalBar.Answered)
    def _on_approval(self, message: ApprovalBar.Answered) -> None:
        self.approvals.answered(message)

    # ------------------------------------------------------------ key actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if len(self.screen_stack) > 1 and action not in DIALOG_ACTIONS:
            return False  # a dialog is up: its own keys (and footer) apply, Esc closes it
        return self.keys.applies(action)

    def action_cancel_turn(self) -> None:
        self.keys.cancel_turn()

    def action_escape_idle(self) -> None:
        self.keys.escape()

    def action_copy_selection(self) -> None:
        self.keys.copy_selection()

    def action_interrupt(self) -> None:
        self.keys.interrupt()

    def get_driver_class(self) -> type[Driver]:
        driver = super().get_driver_class()
        if driver.__name__ != "LinuxDriver":  # Windows, the web: left as Textual makes them
            return driver
        from tui_agent.ui.terminal_driver import TerminalDriver

        return TerminalDriver

    def on_terminal_driver_lost(self) -> None:
        """The terminal hung up (`TerminalDriver.Lost`): nobody is left to ask, so quit."""
        if self.hooks.terminal_lost is not None:
            self.hooks.terminal_lost()
        else:
            self.action_quit_app()

    def action_quit_app(self) -> None:
        self._call(self._quit_sequence(), "quit")

    async def _quit_sequence(self) -> None:
        self._detach_loop()
        if self.vm.busy:
            await self.loop.cancel(force=True)
        await self.loop.close()
        self.exit()

    def action_cycle_approval(self) -> None:
        slash_commands.set_approval(self, "")  # plan → ask → auto-edit → yolo → plan

    def action_steer(self) -> None:
        self.prompt_input.action_steer()

    def action_toggle_tools(self) -> None:
        self.main_screen.toggle_pane(self.tools_pane)

    def action_toggle_queue(self) -> None:
        self.main_screen.toggle_pane(self.queue_pane)

    def action_toggle_last_tool(self) -> None:
        self.transcript.toggle_last_tool()

    def action_find(self) -> None:
        self.find_bar.open()

    @on(FindBar.Reveal)
    async def _on_find_reveal(self, message: FindBar.Reveal) -> None:
        await self.transcript.reveal(message.block_id)

    def action_inspect(self) -> None:
        from tui_agent.ui.inspector import toggle_inspector  # loaded when first opened

        toggle_inspector(self, self.vm)

    # ------------------------------------------------------------ slash commands

    def run_slash(self, name: str, arg: str = "") -> None:
        """Run a built-in command (typed, picked in the palette, or Esc Esc for /rewind)."""
        commands.run(self, name, arg)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield from commands.palette(self)  # the command palette lists ours after Textual's
