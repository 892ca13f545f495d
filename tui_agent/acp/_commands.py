"""Slash commands over ACP: the list an editor offers (`available_commands_update`) and what a
prompt `/name arguments` does.

Built-in commands are those of the app that make sense in an editor's session (the editor
keeps sessions, history and clipboard itself): `/compact`, `/model`, `/approval`, `/status`,
`/cost` and `/permissions`; each answers with a message, as the app's answer is a line in its
transcript. Commands that become a prompt (the user's Markdown commands; other sources, such as
skills, add theirs through `available`) are expanded and sent to the model. A `/word` that is no
command is refused with the nearest names, never sent, as in the app.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from acp import RequestError
from acp import schema as acp

from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop.api import LoopApi
from tui_agent.loop.reports import cost_text, permissions_text, status_text
from tui_agent.session import available_skills, load_custom_commands, skill_commands
from tui_agent.vocab import APPROVAL_MODES, ApprovalMode

_COMMAND = re.compile(r"/([A-Za-z][\w.:-]*)(?:\s+(.*))?", re.DOTALL)


class Host(Protocol):
    """What a built-in command acts on: the session's loop, and the model switch."""

    @property
    def loop(self) -> LoopApi: ...

    async def set_model(self, model: str) -> None: ...


@dataclass(frozen=True)
class Command:
    name: str  # without the slash
    description: str
    hint: str = ""  # what it takes after its name ("" when nothing)
    run: Callable[[Host, str], Awaitable[str]] | None = None  # a built-in: its answer
    expand: Callable[[str], str] | None = None  # a command that becomes this prompt
    model: str | None = None  # the model its turn runs on (a user's command's `model:`)


async def _compact(host: Host, arg: str) -> str:
    await host.loop.compact()
    return "The conversation was summarised."


async def _model(host: Host, arg: str) -> str:
    if not arg:
        return f"Model: {host.loop.info.model} (/model NAME switches)"
    try:
        await host.set_model(arg)
    except RequestError as error:
        reasons = error.data.values() if isinstance(error.data, dict) else [error]
        return "Model unchanged: " + "; ".join(str(reason) for reason in reasons)
    return f"Model: {host.loop.info.model}"


async def _approval(host: Host, arg: str) -> str:
    if arg not in APPROVAL_MODES:
        return f"Approval mode: {host.loop.info.approval_mode} (one of {', '.join(APPROVAL_MODES)})"
    mode: ApprovalMode = arg
    host.loop.set_approval_mode(mode)
    return f"Approval mode: {mode}"


async def _status(host: Host, arg: str) -> str:
    return status_text(host.loop.info)


async def _cost(host: Host, arg: str) -> str:
    return cost_text(host.loop.costs())


async def _permissions(host: Host, arg: str) -> str:
    rules = host.loop.permission_rules()
    action, _, number = arg.partition(" ")
    if not action:
        return permissions_text(rules)
    if action != "remove" or not number.strip().isdigit():
        return "usage: /permissions, or /permissions remove N"
    index = int(number) - 1
    if not 0 <= index < len(rules):
        return f"no rule number {number} (/permissions lists them)"
    rule = rules[index]
    return host.loop.remove_permission_rule(rule) or f"removed {rule.effect} {rule.text}"


BUILTIN: tuple[Command, ...] = (
    Command("compact", "Summarise the conversation to free context", run=_compact),
    Command("model", "Show or switch the model of this session", "NAME", _model),
    Command("approval", "Show or set the approval mode", "plan|ask|auto-edit|yolo", _approval),
    Command("status", "Model, approval mode, sandbox, session and workspace", run=_status),
    Command("cost", "What the session and this turn cost; budgets", run=_cost),
    Command("permissions", "The permission rules in force; remove one", "[remove N]", _permissions),
)


def custom_commands(workspace: Path, *, yolo: bool = False) -> list[Command]:
    """The user's Markdown commands of this workspace (unreadable files are left out), then
    `/<skill-name>` for each skill it offers (the project's once trusted)."""
    found, _ = load_custom_commands(workspace)
    skills = skill_commands(available_skills(workspace, trust_all=yolo), {c.name for c in found})
    return [
        Command(c.name, c.description, c.argument_hint, expand=c.expand, model=c.model or None)
        for c in (*found, *skills)
    ]


def available(*sources: Iterable[Command]) -> list[Command]:
    """The built-in commands, then each source's, in order; a name already taken keeps its
    first owner (a user's command never hides a built-in one)."""
    found: dict[str, Command] = {}
    for command in (*BUILTIN, *(c for source in sources for c in source)):
        found.setdefault(command.name, command)
    return list(found.values())


def commands_update(commands: Sequence[Command]) -> acp.AvailableCommandsUpdate:
    return acp.AvailableCommandsUpdate(
        session_update="available_commands_update",
        available_commands=[
            acp.AvailableCommand(
                name=c.name,
                description=c.description,
                input=acp.UnstructuredCommandInput(hint=c.hint) if c.hint else None,
            )
            for c in commands
        ],
    )


@dataclass(frozen=True)
class Invocation:
    command: Command | None  # None: an unknown `/word`
    word: str
    arguments: str

    def refusal(self, commands: Sequence[Command]) -> str:
        names = [c.name for c in commands]
        nearest = difflib.get_close_matches(self.word, names, n=3)
        hint = ", ".join(f"/{name}" for name in nearest) or ", ".join(f"/{n}" for n in names)
        return f"/{self.word} is not a command (try {hint}); nothing was sent"


def invocation(text: str, commands: Sequence[Command]) -> Invocation | None:
    """The command a prompt calls, or None when it is a prompt (a path such as `/usr/lib`
    included: a command word holds no second slash)."""
    match = _COMMAND.fullmatch(text.strip())
    if match is None:
        return None
    word, arguments = match.group(1), (match.group(2) or "").strip()
    command = next((c for c in commands if c.name == word), None)
    return Invocation(command, word, arguments)
