"""The app's screen: it composes the layout, folds it on narrow terminals, and paints what the
user types at once.

The layout is one `compose`: the transcript beside a side column of panes, then the completion
lists, the approval box, the find bar, the prompt, the status bar and the footer. The two lists
and the find bar, hidden until wanted, are mounted in their places just after the first frame.
Each pane takes the view model and redraws itself when its part changes (`widgets/pane.py`), so
adding a pane is its widget, its styles and one line here. Below `NARROW_BELOW` columns the side
column folds and Ctrl+T / Ctrl+N show one pane in place of the transcript.

Textual paints at most 60 frames a second: after a frame the next one waits for its slot, 16 to
33 ms later. While an answer streams every slot is taken, so a key's echo waited for the next
one, and for the stream's drawing in it (measured at 3,000 characters a second: 16 ms at the
median, against 4 ms with nothing streaming). Now the change a key makes to the focused widget,
which is where keys go, is painted as soon as the screen has nothing else queued instead, and
alone: what else waits (the answer, the scroll bar it moved) keeps to the frame's slot. Only a
key's: a focused widget that redraws by itself (output streaming into it) keeps to the slots.
Right after, the transcript draws what streamed while the key was on its way (it holds streamed
text while the person types): the answer's frame then falls in the gap before the next key, not
at a moment where the next key would wait behind it. And a frame the timer would start while a
key is on its way (the terminal driver knows: `input_waiting`) waits for the key's paint.

It hooks Textual's frame through `PaintNowScreen` (`ui/_textual_hooks.py`, where the private
names it needs are listed); `tests/ui/test_main_screen.py` fails if the hook stops painting.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widget import Widget

from tui_agent.ui._textual_hooks import PaintNowScreen, app_driver
from tui_agent.ui.terminal_driver import TerminalDriver
from tui_agent.ui.view_model import ViewModel
from tui_agent.ui.widgets.approval_bar import ApprovalBar
from tui_agent.ui.widgets.completion import PathCompletion, SlashCompletion
from tui_agent.ui.widgets.find_bar import FindBar
from tui_agent.ui.widgets.key_footer import KeyFooter
from tui_agent.ui.widgets.plan_pane import PlanPane
from tui_agent.ui.widgets.prompt_input import PromptInput
from tui_agent.ui.widgets.queue_pane import QueuePane
from tui_agent.ui.widgets.status_bar import StatusBar
from tui_agent.ui.widgets.tools_pane import ToolsPane
from tui_agent.ui.widgets.transcript import Transcript

NARROW_BELOW = 100  # columns: below this the side column folds into Ctrl+T / Ctrl+N toggles


class MainScreen(PaintNowScreen):
    """The screen the app composes into (see the module)."""

    def __init__(self, vm: ViewModel) -> None:
        super().__init__()
        self._key_pending = False  # a key is on its way to the focused widget
        self._paint_now: Widget | None = None  # the focused widget, which asked for a repaint
        self.narrow = False
        self.vm = vm  # what a pane composed here shows
        self.transcript = Transcript(vm, id="transcript")
        self.plan_pane = PlanPane(vm, id="plan")
        self.tools_pane = ToolsPane(vm, id="tools")
        self.queue_pane = QueuePane(vm, id="queue")
        self.status_bar = StatusBar(vm, id="status")
        self.prompt_input = PromptInput(id="input")
        self.footer = KeyFooter(id="footer")
        self.approval_bar = ApprovalBar(id="approval")
        self.completion = SlashCompletion(id="completion")
        self.paths = PathCompletion(id="path-completion")
        self.find_bar = FindBar(vm, id="find")
        # Hidden until wanted, and mounted just after the first frame (`_mount_hidden`): styling
        # them (the two lists, the find bar and its input) would have held that frame back.
        for hidden in (self.completion, self.paths, self.find_bar):
            hidden.display = False

    def key_pressed(self) -> None:
        """The app received a key from the terminal."""
        self._key_pending = True
        if isinstance(driver := app_driver(self.app), TerminalDriver):
            driver.key_taken()

    def input_waiting(self) -> bool:
        driver = app_driver(self.app)
        return isinstance(driver, TerminalDriver) and driver.input_waiting()

    def widget_updated(self, widget: Widget) -> None:
        if self._key_pending and widget is self.focused:
            self._key_pending = False
            self._paint_now = widget

    def idle(self) -> None:
        if self._paint_now is not None and self.is_current and not self.batching:
            widget, self._paint_now = self._paint_now, None
            self.paint_now(widget)  # without waiting for the frame's slot
            self.transcript.key_painted()  # the answer's frame comes in the gap before the next key

    # ------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            yield self.transcript
            with Vertical(id="side"):
                yield self.plan_pane
                yield self.tools_pane
                yield self.queue_pane
        yield self.approval_bar
        yield self.prompt_input
        yield self.status_bar
        yield self.footer

    def on_mount(self) -> None:
        self.approval_bar.display = False
        self.call_after_refresh(self._mount_hidden)

    async def _mount_hidden(self) -> None:
        await self.mount(self.completion, self.paths, before=self.approval_bar)
        await self.mount(self.find_bar, after=self.approval_bar)

    def fold(self, width: int) -> None:
        """Fold the side column below `NARROW_BELOW` columns (the status bar counts instead)."""
        narrow = self.narrow = width < NARROW_BELOW
        self.set_class(narrow, "-narrow")
        if not narrow:
            self.remove_class("-show-tools", "-show-queue")
        self.status_bar.show_counts = narrow
        self.status_bar.refresh_status()
        # Once laid out at the new width: which segments fit depends on it.
        self.call_after_refresh(self.status_bar.refresh_status)

    def toggle_pane(self, pane: ToolsPane | QueuePane) -> None:
        """Ctrl+T / Ctrl+N: focus the pane (narrow: show it over the transcript), or go back."""
        css_class = "-show-tools" if pane is self.tools_pane else "-show-queue"
        if self.narrow:
            shown = not self.has_class(css_class)
            self.remove_class("-show-tools", "-show-queue")
            self.set_class(shown, css_class)
            if shown:
                pane.focus()
            else:
                self.home().focus()
        elif pane.has_focus:
            self.home().focus()
        else:
            pane.focus()

    def home(self) -> PromptInput | ApprovalBar:
        """Where the keyboard returns from a pane: the approval while one waits, else the prompt."""
        return self.approval_bar if self.approval_bar.display else self.prompt_input

    @on(ToolsPane.Emptied)
    def _on_tools_emptied(self) -> None:
        # Nothing left to select there: back to the input (and the transcript).
        self.remove_class("-show-tools")
        self.home().focus()
