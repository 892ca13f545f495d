"""Running a custom command's prompt: its `` !`cmd` `` commands first, then the prompt.

Each `` !`cmd` `` runs like a typed `!command` (its row in the transcript, in the loop's
sandbox) and its output replaces it in the prompt before the prompt is sent. They run only when
the permission rules in force or the command's own `allowed-tools` allow each of them, or the
mode is yolo; otherwise the person is shown the commands and sends the command again to run
them (the approval). A command a deny rule matches never runs, and a project's command that
runs commands does nothing until the person trusts the workspace's commands. `@path` words in
the prompt are attached as typed ones are (`PromptFlow.send`). The command's `allowed-tools`
go with its prompt: the turn it opens may use only those tools. So does its `model`: the turn
runs on it (a model the session cannot reach refuses the command: nothing is sent).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.session import CommandTrust, CustomCommand, shell_verdicts, with_outputs

if TYPE_CHECKING:
    from tui_agent.ui.app import TuiAgentApp
    from tui_agent.vocab import PromptDraft

CONFIRM_WINDOW_S = 60.0  # sent again within this, the shown commands run


def send_custom(
    app: TuiAgentApp, command: CustomCommand, arguments: str, *, steer: bool, typed: PromptDraft
) -> None:
    from tui_agent.vocab import PromptDraft  # loaded with the prompt the person typed

    prompt = command.expand(arguments)
    limit = command.allowed_tools or None
    if not command.shell_commands:
        # A command is one line, so it holds no paste chip: its expansion is plain text.
        app.prompt.send(
            PromptDraft(text=prompt),
            steer=steer,
            typed=typed,
            allowed_tools=limit,
            model=command.model or None,
        )
        return
    app._call(_with_outputs(app, command, prompt, steer, typed), f"/{command.name}")


async def _with_outputs(
    app: TuiAgentApp, command: CustomCommand, prompt: str, steer: bool, typed: PromptDraft
) -> None:
    info = app.loop.info
    workspace = Path(info.workspace)
    app.transcript.action_follow()
    trust = CommandTrust(workspace, trust_all=app.vm.status.approval_mode == "yolo")
    if not await asyncio.to_thread(trust.trusted, command):
        app.vm.add_marker(
            "warning",
            f"/{command.name} comes with this repository and runs commands "
            f"({'; '.join(command.shell_commands)}): nothing was run or sent, because the "
            "workspace's commands are not trusted yet (start with --yolo, or trust them when "
            "asked at start)",
        )
        return
    rules = [(r.effect, r.text) for r in app.loop.permission_rules() if r.active]
    verdicts = await asyncio.to_thread(
        shell_verdicts, workspace, command.shell_commands, rules, command.allowed_tools
    )
    denied = [c for c, effect in verdicts.items() if effect == "deny"]
    if denied:
        app.vm.add_marker(
            "warning",
            f"/{command.name} not sent: a deny rule refuses {'; '.join(denied)}",
        )
        return
    asking = [c for c, effect in verdicts.items() if effect != "allow"]
    if asking and app.vm.status.approval_mode != "yolo" and not _confirmed(app, typed.text):
        app.vm.add_marker(
            "warning",
            f"/{command.name} runs {'; '.join(asking)} (no allow rule covers it): send "
            f"{typed.text.strip()} again to run it and send the prompt",
        )
        return
    outputs = {c: await app.power.command_output(info, c) for c in command.shell_commands}
    from tui_agent.vocab import PromptDraft

    app.prompt.send(
        PromptDraft(text=with_outputs(prompt, outputs.__getitem__)),
        steer=steer,
        typed=typed,
        allowed_tools=command.allowed_tools or None,
        model=command.model or None,
    )


def _confirmed(app: TuiAgentApp, typed: str) -> bool:
    key, now, asked = f"run {typed.strip()}", app.clock(), app._confirming
    if asked is not None and asked[0] == key and now - asked[1] <= CONFIRM_WINDOW_S:
        app._confirming = None
        return True
    app._confirming = (key, now)
    return False
