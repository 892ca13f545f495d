"""The dialogs of /rewind, /fork and /undo: pick an earlier prompt, then choose what to restore.

`RewindPicker` lists the prompts still in the conversation (the latest highlighted) and returns
the chosen `RestorePlan` with what to do there: rewind to before it (Enter), or fork after it
(`f`, or Enter when it was opened for /fork). `RestoreChoice` shows what a restore would do
(the files it puts back, those someone else changed since, the shell calls it cannot undo) and
returns the chosen option's id, or None when the person backs out. Both name a prompt as the
person typed it (`typed_prompt`): the words, mentions and paste chips, never the files attached
to it.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui_agent.loop.api import RestorePlan
from tui_agent.session import split_attachments
from tui_agent.vocab import PromptDraft

BOTH, CONVERSATION, CODE = "both", "conversation", "code"
REWIND, FORK = "rewind", "fork"


def typed_prompt(plan: RestorePlan) -> PromptDraft:
    """What the person typed for the plan's prompt. A log from before drafts were recorded
    gives the words without their attachments (the mentions are in the words)."""
    return plan.draft or PromptDraft(text=split_attachments(plan.prompt)[0])


def _first_line(text: str, width: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(empty prompt)"
    return line if len(line) <= width else line[: width - 1] + "…"


class RewindPicker(ModalScreen[tuple[str, RestorePlan] | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("f", "fork", "Fork here"),
    ]

    def __init__(self, plans: list[RestorePlan], *, fork: bool = False) -> None:
        super().__init__(id="rewind")
        self.plans = plans
        self.fork = fork

    def compose(self) -> ComposeResult:
        with Vertical(id="rewind-box"):
            title = (
                "Fork after a prompt: it stays, what followed becomes a branch (Enter picks)"
                if self.fork
                else "Rewind to just before a prompt (Enter picks, f forks after it, Esc closes)"
            )
            yield Static(title, classes="title")
            options = []
            for index, plan in enumerate(self.plans):
                label = Text(f"❯ {_first_line(typed_prompt(plan).text)}")
                facts = []
                if plan.files:
                    facts.append(f"{len(plan.files)} file{'s' * (len(plan.files) != 1)}")
                if plan.shell:
                    facts.append(f"{len(plan.shell)} shell call{'s' * (len(plan.shell) != 1)}")
                if facts and not self.fork:  # what a rewind to before it would undo
                    label.append("  " + " · ".join(facts), style="dim")
                options.append(Option(label, id=str(index)))
            picker = OptionList(*options)
            picker.highlighted = len(options) - 1 if options else None
            yield picker

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss((FORK if self.fork else REWIND, self.plans[int(event.option.id or 0)]))

    def action_fork(self) -> None:
        highlighted = self.query_one(OptionList).highlighted
        if highlighted is not None:
            self.dismiss((FORK, self.plans[highlighted]))

    def action_close(self) -> None:
        self.dismiss(None)


class RestoreChoice(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(
        self,
        title: str,
        plan: RestorePlan,
        options: list[tuple[str, str]],
        *,
        outside: str = "Restoring overwrites those changes.",
    ) -> None:
        super().__init__(id="restore")
        self.heading = title
        self.plan = plan
        self.options = options
        self.outside = outside  # what happens to the files changed outside the agent

    @classmethod
    def for_rewind(cls, plan: RestorePlan) -> RestoreChoice:
        options = [(CONVERSATION, "Restore the conversation only")]
        if plan.files:
            options = [
                (BOTH, "Restore code and conversation"),
                *options,
                (CODE, "Restore the code only"),
            ]
        return cls(f"Rewind to before: {_first_line(typed_prompt(plan).text)}", plan, options)

    @classmethod
    def for_undo(cls, plan: RestorePlan) -> RestoreChoice:
        label = "Restore them, overwriting what changed since"
        return cls(
            f"Undo the file changes of: {_first_line(typed_prompt(plan).text)}",
            plan,
            [(CODE, label)],
        )

    def compose(self) -> ComposeResult:
        plan = self.plan
        with Vertical(id="rewind-box"):
            yield Static(self.heading, classes="title")
            if plan.files:
                yield Static("Files to restore: " + ", ".join(plan.files))
            else:
                yield Static("No file changes to restore.")
            if plan.changed_outside:
                changed = ", ".join(plan.changed_outside)
                yield Static(
                    f"Changed by someone else since the agent wrote them: {changed}. "
                    + self.outside,
                    classes="warning",
                )
            if plan.shell:
                commands = "\n".join(f"  $ {_first_line(command)}" for command in plan.shell)
                yield Static(
                    "Shell commands cannot be undone; these ran since:\n" + commands,
                    classes="warning",
                )
            choices = OptionList(*(Option(label, id=key) for key, label in self.options))
            choices.highlighted = 0
            yield choices
            yield Static("Esc keeps everything as it is", classes="hint")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)
