"""What Esc, Ctrl+C and the copy keys do, and when the footer offers them.

Esc first closes what is open (the path or command completion, the find bar, a running `!`
command, a deny reason or scope choice, the edit of a queued prompt); with nothing open it
cancels a running turn, and on an idle app it clears the draft, or, pressed twice on an empty
input within `QUIT_WINDOW_S`, opens /rewind. Ctrl+C copies a selection when there is one;
otherwise it cancels the turn (a second one while it is cancelling forces it) or clears the
draft, and a second Ctrl+C within `QUIT_WINDOW_S` quits. The app keeps the bindings and calls
these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_agent.ui.app import TuiAgentApp

QUIT_WINDOW_S = 2.0  # a second Ctrl+C (or Esc on an empty input) within this many seconds


class KeyActions:
    """The Esc / Ctrl+C / copy keys of one app (see the module)."""

    def __init__(self, app: TuiAgentApp) -> None:
        self.app = app
        self.last_ctrl_c: float | None = None
        self.last_escape: float | None = None  # an Esc on the empty input, for Esc Esc

    def applies(self, action: str) -> bool | None:
        """The footer's answer for `action` on the main screen (None: shown greyed)."""
        busy = self.app.vm.busy
        if action == "cancel_turn":
            return busy if not self.escape_has_local_target() else False
        if action == "escape_idle":
            return not (busy and not self.escape_has_local_target())
        if action == "steer":
            prompt = self.app.prompt_input
            return True if prompt.text.strip() and prompt.display else None
        return True

    def escape_has_local_target(self) -> bool:
        """Esc first closes what is open (a dialog, the completion, a deny reason, an edit)."""
        app = self.app
        return (
            app.completion.display
            or app.find_bar.display
            or app.paths.display
            or app.power.shell_running
            or app.approval_bar.asking_reason
            or app.approval_bar.choosing_scope
            or app.prompt.editing is not None
        )

    def cancel_turn(self) -> None:
        force = self.app.vm.status.activity == "cancelling"
        self.app._call(self.app.loop.cancel(force=force), "cancel")

    def escape(self) -> None:
        app = self.app
        if app.paths.display:
            app.paths.display = False
            app.prompt_input.mention_open = False
        elif app.power.shell_running:
            app.power.stop_shell()
        elif app.completion.display:
            app.prompt.hide_completion()
        elif app.find_bar.display:
            app.find_bar.close()
            app.main_screen.home().focus()
        elif app.approval_bar.back():
            pass
        elif app.prompt.editing is not None:
            app.prompt.leave_edit()
        elif self._escape_twice():
            app.run_slash("rewind")
        else:
            app.prompt_input.clear_draft()
            app.prompt_input.focus()

    def selected_text(self) -> str:
        """What the mouse selected on the screen, else what is selected in the prompt."""
        return self.app.screen.get_selected_text() or self.app.prompt_input.selected_text

    def copy(self, text: str, what: str) -> None:
        self.app.copy_to_clipboard(text)  # Textual's clipboard and the terminal's (OSC 52)
        lines = text.count("\n") + 1
        self.app.notify(f"copied {what} ({lines} line{'s' if lines != 1 else ''})", timeout=2)

    def copy_selection(self) -> None:
        text = self.selected_text()
        if text:
            self.copy(text, "the selection")

    def _escape_twice(self) -> bool:
        """Esc Esc on an empty input (within the Ctrl+C window) opens /rewind."""
        now, last = self.app.clock(), self.last_escape
        empty = not self.app.prompt_input.text
        self.last_escape = now if empty else None
        if empty and last is not None and now - last <= QUIT_WINDOW_S:
            self.last_escape = None
            return True
        return False

    def interrupt(self) -> None:
        app = self.app
        if self.selected_text():
            self.copy_selection()  # a selection makes Ctrl+C a copy and nothing else
            return
        now = app.clock()
        if self.last_ctrl_c is not None and now - self.last_ctrl_c <= QUIT_WINDOW_S:
            app.action_quit_app()
            return
        self.last_ctrl_c = now
        if app.vm.busy:
            self.cancel_turn()
        else:
            app.prompt_input.clear_draft()
            app.notify("Press Ctrl+C again to quit", timeout=QUIT_WINDOW_S)
