"""Tool calls in Claude Code's words, so hook scripts written for Claude Code work unchanged.

`tool_name` and `tool_input` use Claude Code's names and fields (`Bash` / `command`, `Edit` /
`file_path`, `old_string`, `new_string`, `Write` / `file_path`, `content`, `Read` /
`file_path`, ...); file paths are absolute, as Claude Code gives them. MCP tools keep their
`mcp__server__tool` names. A tool Claude Code has no word for keeps its own name and arguments.
`tool_response` is the result's text with a success flag, plus the fields Claude Code scripts
read most (`stdout` for Bash, `filePath` for the file tools).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui_agent.vocab import ToolResult

Fields = dict[str, Any]
_Translate = Callable[[Fields, Path], Fields]


def _path(args: Fields, workspace: Path) -> str:
    return str(workspace / str(args.get("path") or "."))


def _bash(args: Fields, workspace: Path) -> Fields:
    out: Fields = {"command": args.get("command", "")}
    if args.get("timeout_s"):
        out["timeout"] = int(float(args["timeout_s"]) * 1000)  # Claude Code: milliseconds
    if args.get("background"):
        out["run_in_background"] = True
    return out


def _read(args: Fields, workspace: Path) -> Fields:
    out: Fields = {"file_path": _path(args, workspace)}
    out.update({key: args[key] for key in ("offset", "limit") if args.get(key) is not None})
    return out


def _write(args: Fields, workspace: Path) -> Fields:
    return {"file_path": _path(args, workspace), "content": args.get("content", "")}


def _edit(args: Fields, workspace: Path) -> Fields:
    return {
        "file_path": _path(args, workspace),
        "old_string": args.get("old_string", ""),
        "new_string": args.get("new_string", ""),
        "replace_all": bool(args.get("replace_all", False)),
    }


def _search(args: Fields, workspace: Path) -> Fields:
    out: Fields = {"pattern": args.get("pattern", "")}
    if args.get("path"):
        out["path"] = _path(args, workspace)
    if args.get("glob"):
        out["glob"] = args["glob"]
    if args.get("ignore_case"):
        out["-i"] = True
    return out


def _same(args: Fields, workspace: Path) -> Fields:
    return dict(args)


# Ours -> (Claude Code's name, how the arguments read in its words).
TOOLS: dict[str, tuple[str, _Translate]] = {
    "shell": ("Bash", _bash),
    "read_file": ("Read", _read),
    "write_file": ("Write", _write),
    "edit_file": ("Edit", _edit),
    "grep": ("Grep", _search),
    "glob": ("Glob", _search),
    "web_fetch": ("WebFetch", _same),
    "web_search": ("WebSearch", _same),
    "task": ("Task", _same),
    "todo_write": ("TodoWrite", _same),
    "exit_plan_mode": ("ExitPlanMode", _same),
}


def tool_name(name: str) -> str:
    return TOOLS[name][0] if name in TOOLS else name


def tool_input(name: str, args: Fields, workspace: Path) -> Fields:
    return TOOLS[name][1](args, workspace) if name in TOOLS else dict(args)


def tool_response(name: str, args: Fields, result: ToolResult, workspace: Path) -> Fields:
    text = result.text
    out: Fields = {"success": not result.is_error, "output": text}
    if name == "shell":
        out.update(stdout=text, stderr="", interrupted=False)
    elif name in ("read_file", "write_file", "edit_file"):
        out["filePath"] = _path(args, workspace)
    return out
