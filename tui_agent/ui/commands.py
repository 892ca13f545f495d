"""The slash commands: their names, argument hints and help, shared by completion and palette."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    name: str  # without the slash
    args: str  # hint shown after the name, "" when none
    help: str


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "", "Keys and commands"),
    SlashCommand("new", "", "Start a new session"),
    SlashCommand("sessions", "", "Pick a session to resume"),
    SlashCommand("resume", "[SESSION_ID]", "Resume a session (no id: pick one)"),
    SlashCommand("compact", "", "Summarise the conversation to free context"),
    SlashCommand("model", "NAME", "Switch the model for this session"),
    SlashCommand("approval", "[ask|auto-edit|yolo]", "Set the approval mode (no mode: next one)"),
    SlashCommand("inspect", "", "Open the live machine inspector (F2)"),
    SlashCommand("undo", "", "Put back the files the last turn changed"),
    SlashCommand("rewind", "", "Go back to before an earlier prompt (Esc Esc)"),
    SlashCommand("export", "[md|html|jsonl] [FILE]", "Write this session to a file"),
    SlashCommand("quit", "", "Quit (the turn is cancelled and the log sealed first)"),
)

BY_NAME = {command.name: command for command in COMMANDS}


def matching(prefix: str) -> list[SlashCommand]:
    """Commands whose name starts with what follows the slash."""
    word = prefix.lstrip("/").lower()
    return [c for c in COMMANDS if c.name.startswith(word)]


def parse(text: str) -> tuple[SlashCommand, str] | None:
    """`/name arg` for a known command, else None (the text is a prompt that starts with /)."""
    stripped = text.strip()
    if not stripped.startswith("/") or "\n" in stripped:
        return None
    name, _, arg = stripped[1:].partition(" ")
    command = BY_NAME.get(name.lower())
    return (command, arg.strip()) if command else None


KEYS_HELP = """\
Enter           send (while a turn runs: queue as the next turn)
Ctrl+S          steer: join the running turn at its next drain point
Esc             cancel the turn (again: force); idle: clear the input
Esc Esc         on an empty input: rewind to an earlier prompt
Ctrl+C          cancel the turn; idle: clear; twice within 2 s: quit
Ctrl+Q          quit
Shift+Enter, Ctrl+J, Alt+Enter   newline
Up/Down         prompt history (on an empty input)
Ctrl+T, Ctrl+N  tools pane, queue pane (x cancels a call; e/d/s/⇧↑⇓ edit the queue)
End             follow the transcript again;  F2: machine inspector;  Ctrl+P: palette"""


def help_text() -> str:
    lines = [KEYS_HELP, "", "Commands:"]
    for command in COMMANDS:
        head = f"/{command.name} {command.args}".rstrip()
        lines.append(f"{head:<32}{command.help}")
    return "\n".join(lines)
