"""The slash commands as objects: name, argument hint, help and `run(app, arg)`, one table
(`COMMANDS`) shared by typing, completion, the palette (Ctrl+P) and `/help`; `run` is a lookup.
What each command does is in `slash_commands`.

`parse` tells three cases apart: a known command (or an alias), an unknown `/word` (refused
locally with the nearest names, never sent to the model), and text that merely starts with a
slash (a path such as `/usr/lib`, or a line with a space before the slash), which is a prompt.
The user's own commands (Markdown files, see `session.load_custom_commands`) come after the
built-in ones, which keep their names.
"""

from __future__ import annotations

import difflib
import importlib
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from textual.app import SystemCommand

from tui_agent.lazy_dataclass import dataclass
from tui_agent.session import CustomCommand
from tui_agent.ui import setup_commands as setup
from tui_agent.ui import slash_commands as slash
from tui_agent.ui.hooks_view import show_hooks

if TYPE_CHECKING:
    from tui_agent.loop.mcp_offers import McpPromptInfo
    from tui_agent.ui.app import TuiAgentApp


def _never(arg: str) -> bool:
    return False


@dataclass(frozen=True)
class SlashCommand:
    name: str  # without the slash
    args: str  # hint shown after the name, "" when none
    help: str
    run: Callable[[TuiAgentApp, str], None] | None = None  # a built-in command's action
    custom: CustomCommand | None = None  # a user's command: its prompt template
    mcp_prompt: McpPromptInfo | None = None  # an MCP server's prompt (see `mcp_prompts`)
    cancels_turn: Callable[[str], bool] = _never  # with this argument, it would end the turn


def custom_commands(found: Sequence[CustomCommand]) -> tuple[SlashCommand, ...]:
    """The user's commands as slash commands. A built-in name is never taken over: such a
    command is reached as `/project:NAME` or `/user:NAME` (Claude Code's older prefixes), and
    `/help` says so."""
    return tuple(
        SlashCommand(_reachable(c), c.argument_hint, c.description, custom=c) for c in found
    )


def _reachable(command: CustomCommand) -> str:
    if command.name not in BY_NAME:
        return command.name
    return f"{'project' if command.project else 'user'}:{command.name}"


def _tree(name: str) -> Callable[[TuiAgentApp, str], None]:
    """`tree_view`'s command `name`, imported when it first runs: the tree screen and the
    session tree it reads stay off the app's first frame."""

    def run(app: TuiAgentApp, arg: str) -> None:
        getattr(importlib.import_module("tui_agent.ui.tree_view"), name)(app, arg)

    return run


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "", "Keys and commands", lambda app, arg: _help(app)),
    SlashCommand(
        "new",
        "",
        "Start a new session (also /clear; mid-turn: send it twice)",
        slash.new,
        cancels_turn=slash.always,
    ),
    SlashCommand("sessions", "", "Pick a session to resume", slash.sessions),
    SlashCommand(
        "resume",
        "[SESSION_ID]",
        "Resume a session (no id: pick one)",
        slash.resume,
        cancels_turn=slash.with_argument,
    ),
    SlashCommand(
        "compact", "", "Summarise the conversation to free context (when idle)", slash.compact
    ),
    SlashCommand(
        "model",
        "NAME",
        "Switch the model for this session (mid-turn: send it twice)",
        slash.model,
        cancels_turn=slash.with_argument,
    ),
    SlashCommand(
        "approval",
        "[plan|ask|auto-edit|yolo]",
        "Set the approval mode (no mode: next one)",
        slash.set_approval,
    ),
    SlashCommand(
        "permissions", "[remove N]", "The permission rules in force; remove one", slash.permissions
    ),
    SlashCommand("inspect", "", "Open the live machine inspector (F2)", slash.open_inspector),
    SlashCommand(
        "mcp",
        "[reconnect|login|logout NAME]",
        "MCP servers: status, tools, OAuth, last error",
        slash.mcp,
    ),
    SlashCommand("hooks", "", "Hook commands: where from, trusted or not, last run", show_hooks),
    SlashCommand(
        "status", "", "Model, approval mode, sandbox, session and workspace", slash.status
    ),
    SlashCommand(
        "cost", "", "What the session, this turn and each sub-agent cost; budgets", slash.cost
    ),
    SlashCommand(
        "context", "", "What fills the context window, as a bar with a legend", slash.context
    ),
    SlashCommand(
        "copy", "[N]", "Copy the last answer (N: the N-th last) to the clipboard", slash.copy_answer
    ),
    SlashCommand("undo", "", "Put back the files the last turn changed", slash.undo_command),
    SlashCommand(
        "rewind", "", "Go back to before an earlier prompt (Esc Esc)", slash.rewind_command
    ),
    SlashCommand("fork", "", "Start a new branch after an earlier prompt", _tree("fork_command")),
    SlashCommand("tree", "", "The session's branches; switch to one", _tree("tree_command")),
    SlashCommand(
        "export", "[md|html|jsonl] [FILE]", "Write this session to a file", slash.export_command
    ),
    SlashCommand("find", "TEXT", "Search the whole transcript (Ctrl+F)", slash.find_text),
    SlashCommand("theme", "[NAME]", "List the colour themes, or switch to one", slash.theme),
    SlashCommand(
        "skills", "", "The skills the model may use; /<skill-name> uses one", setup.skills
    ),
    SlashCommand(
        "init", "[NOTES]", "Ask the model to write AGENTS.md for this workspace", setup.init
    ),
    SlashCommand(
        "memory", "", "Open the memory files (AGENTS.md, CLAUDE.md) in $EDITOR", setup.memory
    ),
    SlashCommand(
        "quit",
        "",
        "Quit (also /exit; the turn is cancelled and the log sealed first)",
        slash.quit_app,
    ),
)

ALIASES = {"clear": "new", "exit": "quit"}
BY_NAME = {command.name: command for command in COMMANDS}
BY_NAME.update({alias: BY_NAME[name] for alias, name in ALIASES.items()})
_WORD = re.compile(r"/([A-Za-z][\w.:-]*)")  # a command word: no second slash, so no path


@dataclass(frozen=True)
class UnknownCommand:
    word: str  # as typed, without the slash
    nearest: tuple[str, ...]  # the closest known names, best first

    def message(self) -> str:
        if self.nearest:
            hint = "nearest: " + ", ".join(f"/{name}" for name in self.nearest)
        else:
            hint = "/help lists the commands"
        return f"/{self.word} is not a command ({hint}); nothing was sent"


def matching(prefix: str, custom: Sequence[SlashCommand] = ()) -> list[SlashCommand]:
    """Commands whose name starts with what follows the slash."""
    word = prefix.lstrip("/").lower()
    return [c for c in (*COMMANDS, *custom) if c.name.lower().startswith(word)]


def parse(
    text: str, custom: Sequence[SlashCommand] = ()
) -> tuple[SlashCommand, str] | UnknownCommand | None:
    """`/name arg` for a known command, `UnknownCommand` for another `/word`, else None."""
    if not text.startswith("/") or "\n" in text.strip():
        return None
    head, _, arg = text.strip().partition(" ")
    if (match := _WORD.fullmatch(head)) is None:
        return None
    word = match.group(1)
    command = BY_NAME.get(word.lower()) or next((c for c in custom if c.name == word), None)
    if command is None:
        return UnknownCommand(word, nearest(word, custom))
    return command, arg.strip()


def nearest(word: str, custom: Sequence[SlashCommand] = ()) -> tuple[str, ...]:
    """Known names that start like `word`, then those spelled like it: at most three."""
    names = [*BY_NAME, *(c.name for c in custom)]
    word = word.lower()
    starting = [name for name in names if name.startswith(word[:2])]
    close = difflib.get_close_matches(word, names, n=3, cutoff=0.5)
    return tuple(dict.fromkeys([*close, *starting]))[:3]


KEYS_HELP = """\
Enter           send (while a turn runs: queue it; the queue enters the next turn together)
Ctrl+S          steer: join the running turn at its next drain point
Esc             cancel the turn (again: force); idle: clear the input (Ctrl+Z or Up: back)
Esc Esc         on an empty input: rewind to an earlier prompt (f there: fork after it)
Ctrl+C          with a selection: copy it; else cancel the turn, or clear (twice in 2 s: quit)
Ctrl+Q          quit
Shift+Enter, Alt+Enter, Ctrl+J   newline
Shift+Tab       mode: plan → ask → auto-edit → yolo
Approval box    1-3 or ↑↓ Enter answer; y/a/n when not typing; Tab: draft ↔ box
Up/Down         prompt history (on an empty input);  Ctrl+R: search it
@path           attach a file, folder or image (completion: Tab or Enter);
                a pasted image path attaches the image
Ctrl+V          attach the clipboard's image (wl-paste or xclip)
!command        run it in the workspace shell; its output goes with the next prompt
Ctrl+G          edit the draft in $VISUAL / $EDITOR
Ctrl+O          expand or fold the last tool call (a pasted chip: unfold it)
Enter           on a tool row or thinking (click or Tab to it): open or fold it
PageUp/PageDown scroll the transcript;  Ctrl+Home, Home: its very start
End, Ctrl+End   the end of the transcript, following it again
Ctrl+F, /find   search the whole transcript: Enter/F3 the next match up,
                Shift+Enter/Shift+F3 down, Esc closes
Ctrl+T, Ctrl+N  tools / queue pane: Delete cancels or removes, Enter edits,
                Ctrl+S steers, Shift+Up/Down reorders
Typing anywhere outside a text box goes to the prompt
F2              machine inspector;  Ctrl+P: command palette
/new, /model, /resume ID cancel a running turn: sent mid-turn they ask first (send it again)"""


def help_text(custom: Sequence[SlashCommand] = ()) -> str:
    lines = [KEYS_HELP, "", "Commands:"]
    for command in COMMANDS:
        head = f"/{command.name} {command.args}".rstrip()
        lines.append(f"{head:<32}{command.help}")
    if custom:
        lines += ["", "Your commands (.tui-agent/commands, .claude/commands, ~ commands):"]
        for command in custom:
            head = f"/{command.name} {command.args}".rstrip()
            lines.append(f"{head:<32}{command.help}")
        for command in custom:
            if command.custom is not None and command.custom.name != command.name:
                lines.append(
                    f"{command.custom.path} is hidden by the built-in /{command.custom.name}: "
                    f"type /{command.name} to run it (or rename the file)"
                )
    return "\n".join(lines)


def _help(app: TuiAgentApp) -> None:
    app.vm.add_marker("info", help_text(app.power.commands))


def run(app: TuiAgentApp, name: str, arg: str = "") -> None:
    """Run the built-in command `name` (without the slash) with `arg`."""
    command = BY_NAME[name]
    if command.name != "find":
        # A command answers at the end of the transcript: show the end (typed, picked in
        # the palette, or Esc Esc), however far up the person had scrolled.
        app.transcript.action_follow()
    if command.cancels_turn(arg) and not slash.confirmed(app, f"{command.name} {arg}".strip()):
        return
    assert command.run is not None  # the built-in table has no template commands
    command.run(app, arg)


def palette(app: TuiAgentApp) -> Iterable[SystemCommand]:
    """The built-in commands, as Textual's command palette lists them."""
    for command in COMMANDS:
        yield SystemCommand(
            f"/{command.name}", command.help, lambda name=command.name: app.run_slash(name)
        )
