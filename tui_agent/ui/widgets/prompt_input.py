"""The prompt input: Enter sends, Ctrl+S steers, Shift+Enter / Ctrl+J / Alt+Enter add a line.

The text is taken and the input cleared at the key press itself, so whatever is typed after
Enter (even in the same burst) belongs to the next prompt.

Up and Down on an empty input (or while walking the history) recall earlier prompts. A draft
the person cleared (Esc, Ctrl+C) is never lost: Ctrl+Z undoes the clear, and Up on the empty
input brings it back before any earlier prompt, its paste chips with it. A leading
`/` opens slash-command completion (Tab completes, Up/Down choose); `@` opens path completion
(Tab or Enter accepts). A paste of more than `FOLD_LINES` lines shows as a `[pasted #1: 200
lines]` chip (Ctrl+O puts the text itself in the draft; with no chip, Ctrl+O is the app's
key for the last tool call); the whole text is sent. A pasted path of an image file (a file
dropped on the terminal) becomes an `@path` mention, so the image is attached; Ctrl+V asks for
the clipboard's image. Ctrl+R asks for
history search, Ctrl+G for the external editor. The widget only posts messages; the app decides
what a submit means (run, queue, steer, command, saved edit).

The cursor blinks for `blink_for_s` after the last key, then stays lit (GTK's cursors do the
same): each blink is a frame, twice a second, which was nearly all the CPU of an app left idle
(0.5 % of a core against 0.05 % without it).
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message

from tui_agent.ui._textual_hooks import TextAreaHooks

if TYPE_CHECKING:
    from tui_agent.vocab import PromptDraft

NEWLINE_KEYS = ("shift+enter", "ctrl+j", "alt+enter", "ctrl+enter")
FOLD_LINES = 10  # a paste of more lines than this shows as a chip
PASTE_CHIP = re.compile(r"\[pasted #(\d+): \d+ lines\]")
BLINK_FOR_S = 10.0  # the cursor blinks this long after the last key (see the module)


def unfolded(draft: PromptDraft) -> str:
    """The draft's text with each paste chip replaced by the text it stands for."""
    return PASTE_CHIP.sub(lambda m: draft.pastes.get(int(m.group(1)), m.group(0)), draft.text)


class PromptInput(TextAreaHooks):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Send", key_display="⏎"),
        Binding("ctrl+j", "newline", "Newline", show=False),
    ]

    class Submitted(Message):
        """Sent with the text as it was at the key press; the input is already empty."""

        def __init__(self, draft: PromptDraft, *, steer: bool, completing: bool) -> None:
            super().__init__()
            self.draft = draft  # as typed: chips folded
            self.text = unfolded(draft)  # the words to send: each chip's pasted text in place
            self.steer = steer
            self.completing = completing  # the slash completion was open: Enter picks from it

    class CompletionMove(Message):
        """Up/Down/Tab while the slash completion is open."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    class MentionMove(Message):
        """Up/Down/Tab/Enter while the @ path completion is open."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    class HistorySearchRequested(Message):
        """Ctrl+R: search the prompt history."""

    class ImagePasteRequested(Message):
        """Ctrl+V: attach the image on the clipboard."""

    class EditorRequested(Message):
        """Ctrl+G: edit the draft in $VISUAL / $EDITOR."""

    class JumpToTail(Message):
        """Ctrl+End, or End with the cursor already at the end: follow the transcript again."""

    class JumpToTop(Message):
        """Ctrl+Home, or Home with the cursor already at the start: the session's first block."""

    class PageTranscript(Message):
        """PageUp / PageDown: the transcript scrolls while the prompt keeps the focus."""

        def __init__(self, pages: int) -> None:
            super().__init__()
            self.pages = pages

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, tab_behavior="focus", show_line_numbers=False)
        self.prompt_history: list[str] = []
        self._history_at: int | None = None  # index into history while walking it
        self._draft = ""
        self.completion_open = False
        self.mention_open = False
        self.pastes: dict[int, str] = {}  # folded pastes by chip number
        self.cleared: PromptDraft | None = None  # the last draft the person cleared, until sent
        self.blink_for_s = BLINK_FOR_S
        self._key_at = time.monotonic()
        self._blink_stopped = False  # by `_blink_due`, for want of keys (not by its owner)

    def on_mount(self) -> None:
        self.set_timer(self.blink_for_s, self._blink_due)

    def _blink_a_while(self) -> None:
        """A key: the cursor blinks (again) until `blink_for_s` after it."""
        self._key_at = time.monotonic()
        if self._blink_stopped:
            self._blink_stopped = False
            self.cursor_blink = True
            self.set_timer(self.blink_for_s, self._blink_due)

    def _blink_due(self) -> None:
        if not self.cursor_blink:
            return  # a steady cursor was asked for: it stays so
        left = self._key_at + self.blink_for_s - time.monotonic()
        if left > 0:
            self.set_timer(left, self._blink_due)  # keys came meanwhile
        else:
            self._blink_stopped = True
            self.cursor_blink = False

    # ------------------------------------------------------------ keys

    def take_key(self, event: events.Key) -> bool:
        self._blink_a_while()
        key = event.key
        handled = True
        if key == "enter" and not self.mention_open:
            self.action_submit()
        elif key == "ctrl+s":
            # Here rather than only as an app binding: keys typed just before it are handled
            # first, so a fast "text, Ctrl+S" steers with the whole text.
            self.action_steer()
        elif key in NEWLINE_KEYS:
            self.action_newline()
        elif key in ("up", "down", "tab", "enter") and self.mention_open:
            self.post_message(self.MentionMove(key))
        elif key in ("up", "down", "tab") and self.completion_open:
            self.post_message(self.CompletionMove(key))
        elif key == "ctrl+r":
            self.post_message(self.HistorySearchRequested())
        elif key == "ctrl+g":
            self.post_message(self.EditorRequested())
        elif key == "ctrl+v":
            self.post_message(self.ImagePasteRequested())
        elif key == "ctrl+o" and PASTE_CHIP.search(self.text):
            self.unfold_pastes()  # (otherwise the app's Ctrl+O: the last tool call)
        elif key == "up" and self._can_walk_history(up=True):
            self._walk_history(-1)
        elif key == "down" and self._history_at is not None and self._can_walk_history(up=False):
            self._walk_history(+1)
        elif key == "ctrl+end" or (key == "end" and self.cursor_location == self.document.end):
            self.post_message(self.JumpToTail())
        elif key == "ctrl+home" or (key == "home" and self.cursor_location == (0, 0)):
            self.post_message(self.JumpToTop())
        elif key in ("pageup", "pagedown"):
            self.post_message(self.PageTranscript(-1 if key == "pageup" else 1))
        else:
            handled = False
        return handled

    def action_submit(self) -> None:
        self._post_submit(steer=False)

    def action_steer(self) -> None:
        self._post_submit(steer=True)

    def action_newline(self) -> None:
        self.replace("\n", *self.selection)

    def _post_submit(self, *, steer: bool) -> None:
        draft = self.draft()
        if not unfolded(draft).strip():
            return
        if self.cleared is not None and self.cleared.text == self.text:
            self.cleared = None  # brought back and sent: nothing left to recover
        self.post_message(self.Submitted(draft, steer=steer, completing=self.completion_open))
        self.clear_input()  # now, so keys typed after Enter start the next prompt

    # ------------------------------------------------------------ pastes

    def adjust_paste(self, event: events.Paste) -> None:
        # tmux and many terminals end pasted lines in CR (the Enter key's byte), some in CRLF:
        # one kind of line end, so a CR paste folds like any other and is sent with LFs.
        event.text = event.text.replace("\r\n", "\n").replace("\r", "\n")
        from tui_agent.session import pasted_image_path  # at the first paste

        image = None if self.read_only else pasted_image_path(event.text)
        if image is not None:
            event.stop()
            event.prevent_default()
            shown = str(image)
            self.replace((f'@"{shown}"' if " " in shown else f"@{shown}") + " ", *self.selection)
            return
        lines = event.text.count("\n") + 1
        if lines <= FOLD_LINES or self.read_only:
            return  # Textual runs TextArea's own handler next: it inserts the text (once)
        event.stop()
        event.prevent_default()
        number = max(self.pastes, default=0) + 1
        self.pastes[number] = event.text
        self.replace(f"[pasted #{number}: {lines} lines]", *self.selection)

    def draft(self) -> PromptDraft:
        """The text as typed, with the pasted text of the chips it shows."""
        from tui_agent.vocab import PromptDraft  # at the first prompt sent

        shown = {int(m.group(1)) for m in PASTE_CHIP.finditer(self.text)}
        return PromptDraft(
            text=self.text, pastes={n: t for n, t in self.pastes.items() if n in shown}
        )

    def load_draft(self, draft: PromptDraft) -> None:
        """Put a draft in the input, its chips standing for their pasted text again."""
        self._history_at = None
        self.pastes = dict(draft.pastes)
        self.load_text(draft.text)
        self.move_cursor(self.document.end)

    def unfold_pastes(self) -> None:
        """Ctrl+O: put the pasted text itself in the draft, to read or change it."""
        if PASTE_CHIP.search(self.text):
            self.load_text(unfolded(self.draft()))
            self.move_cursor(self.document.end)

    # ------------------------------------------------------------ history

    def _recallable(self) -> list[str]:
        """What Up walks through, newest last: the prompts sent, then the cleared draft."""
        cleared = [] if self.cleared is None else [self.cleared.text]
        return [*self.prompt_history, *cleared]

    def _can_walk_history(self, *, up: bool) -> bool:
        if not self._recallable():
            return False
        if self._history_at is None:
            return up and not self.text
        row = self.cursor_location[0]
        return row == 0 if up else row == self.document.line_count - 1

    def _walk_history(self, step: int) -> None:
        recallable = self._recallable()
        if self._history_at is None:
            self._draft = self.text
            at = len(recallable) - 1
        else:
            at = self._history_at + step
        if at >= len(recallable):
            self._history_at = None
            self.load_text(self._draft)
        else:
            self._history_at = max(0, at)
            if self.cleared is not None and self._history_at == len(self.prompt_history):
                self.pastes = dict(self.cleared.pastes)  # its chips stand for their text again
            self.load_text(recallable[self._history_at])
        self.move_cursor(self.document.end)

    def clear_draft(self) -> None:
        """The person clears the draft (Esc, Ctrl+C): kept for Up, and cleared as an edit so
        Ctrl+Z undoes it (the chips' pasted text stays behind them)."""
        if self.text.strip():
            self.cleared = self.draft()
        self._history_at = None
        self.clear()

    def clear_input(self) -> None:
        self._history_at = None
        self.pastes = {}
        self.load_text("")
