"""Entry points: the full-screen TUI (`tui-agent [PROMPT]`) and headless print mode (`-p`).

The headless path never imports Textual and keeps imports lazy, so a one-shot run starts fast.
Exit status (docs/ARCHITECTURE.md): 0 completed, 1 failed, 2 usage or configuration error,
130 cancelled (SIGINT; 143 for SIGTERM, 129 for SIGHUP). The first signal cancels the turn
through the loop (tool processes ended, results back-filled, log sealed); a second one kills
the tool processes and exits at once.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import signal
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.cli_parsing import Parser, UsageError
from tui_agent.providers import PROVIDER_KINDS

if TYPE_CHECKING:
    from tui_agent.loop.service import AgentLoopService
    from tui_agent.session import LoopConfig

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130


# Dispatched by `main` before the main parser runs; listed in `--help`.
SUBCOMMANDS = {
    "sessions": "list this workspace's sessions",
    "export": "write a session out as Markdown, HTML or JSON lines",
    "acp": "serve the Agent Client Protocol on stdin/stdout (for editors such as Zed)",
    "replay": "play a recorded session again, or --check that it reruns identically",
    "serve": "serve the app to web browsers (a tab each, behind a token)",
}


def _parser() -> argparse.ArgumentParser:
    commands = "\n".join(f"  tui-agent {name:<9} {what}" for name, what in SUBCOMMANDS.items())
    parser = Parser(
        prog="tui-agent",
        description="A terminal coding agent. Without -p it opens the full-screen app in the "
        "workspace (the current directory unless --workspace says otherwise).",
        epilog=f"subcommands (each takes --help):\n{commands}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("prompt", nargs="?", help="a first prompt (TUI) ")
    parser.add_argument(
        "-p",
        "--print",
        dest="print_prompt",
        metavar="PROMPT",
        help="run one turn headless and print the final answer ('-' reads the prompt from "
        "stdin; otherwise piped stdin is attached to the prompt)",
    )
    parser.add_argument("--output-format", choices=("text", "jsonl"), default="text")
    parser.add_argument("--provider", choices=PROVIDER_KINDS)
    parser.add_argument("--model")
    parser.add_argument("--base-url")
    parser.add_argument("--script", help="a JSON script for the scripted provider")
    parser.add_argument("--max-steps", type=int)
    parser.add_argument(
        "--max-budget-usd",
        type=float,
        metavar="USD",
        help="stop before any request once the session has spent this (default: config.toml's "
        "max_budget_usd)",
    )
    resume = parser.add_mutually_exclusive_group()
    resume.add_argument(
        "--continue",
        dest="continue_latest",
        action="store_true",
        help="continue the latest session of this workspace",
    )
    resume.add_argument("--resume", metavar="SESSION_ID")
    parser.add_argument(
        "--fork",
        action="store_true",
        help="with --continue or --resume: continue a copy of the session as a new session "
        "(the way to go on with a session another tui-agent has open)",
    )
    parser.add_argument(
        "--approval-mode",
        # vocab.APPROVAL_MODES, written out so the parser loads no vocabulary; a test ties them
        choices=("plan", "ask", "auto-edit", "yolo"),
        help="plan: read-only, ends with a plan; ask: ask before edits and commands; auto-edit: "
        "edits and sandboxed commands run; yolo: nothing asks (default: config.toml's, or ask)",
    )
    parser.add_argument("--yolo", action="store_true", help="short for --approval-mode yolo")
    parser.add_argument(
        "--sandbox",
        choices=("workspace-write", "read-only", "off"),
        help="the OS sandbox of commands (default: config.toml's sandbox, else workspace-write)",
    )
    parser.add_argument("--workspace", type=Path, default=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else argv
    if args_list[:1] and args_list[0] in (*SUBCOMMANDS, "mcp"):
        gc.enable()  # off since `entry.main`; only the one-shot and the app resume it later
    if args_list[:1] == ["sessions"]:
        return _list_sessions(args_list[1:])
    if args_list[:1] == ["export"]:
        from tui_agent.export import main as export

        return export(args_list[1:])
    if args_list[:1] == ["replay"]:
        from tui_agent.replay_command import main as replay_main

        return replay_main(args_list[1:])
    if args_list[:1] == ["mcp"]:
        from tui_agent.mcp_cli import main as mcp_main

        return mcp_main(args_list[1:])
    if args_list[:1] == ["acp"]:
        from tui_agent.acp import main as acp_main

        return acp_main(args_list[1:])
    if args_list[:1] == ["serve"]:
        from tui_agent.serve import main as serve_main

        return serve_main(args_list[1:], app_options_error)
    try:
        args = _parser().parse_args(args_list)
        if args.max_steps is not None and args.max_steps < 0:
            raise UsageError("--max-steps must be 0 (unlimited) or more")
        if args.max_budget_usd is not None and not args.max_budget_usd > 0:
            raise UsageError("--max-budget-usd must be more than 0")
        if args.fork and not (args.continue_latest or args.resume):
            raise UsageError("--fork needs --continue or --resume")
        config = _config(args)
        prompt = None if args.print_prompt is None else _headless_prompt(args.print_prompt)
    except UsageError as exc:
        print(f"tui-agent: {exc}", file=sys.stderr)
        return EXIT_USAGE
    # Start-up allocates hundreds of thousands of objects that live as long as the process
    # (modules, classes, the first widgets); collecting among them finds nothing and costs a
    # tenth of the start. `entry.main` turned collection off before its first import (this is
    # for callers that come here directly); it resumes once the loop is open (headless) or the
    # first frame is drawn (the app), with what exists by then frozen out of later collections.
    gc.disable()
    if prompt is not None:
        return asyncio.run(_headless(config, prompt, args.output_format))
    return _tui(config, args.prompt)


def app_options_error(argv: list[str]) -> str | None:
    """What is wrong with `argv` as the app's options for each tab of `tui-agent serve`, or
    None; a prompt makes no sense there (every tab would send it)."""
    try:
        args = _parser().parse_args(argv)
        if args.prompt is not None or args.print_prompt is not None:
            raise UsageError("serve takes no prompt: type it in the browser")
        _config(args)
    except UsageError as exc:
        return str(exc)
    return None


def _headless_prompt(given: str) -> str:
    """`-p -` takes the whole prompt from stdin (no argument-length limit); any other prompt
    gets piped stdin attached as context. Only a pipe or a file is read, never a terminal."""
    piped = _piped_stdin()
    if given == "-":
        if piped is None:
            raise UsageError("-p -: pipe the prompt into stdin (it is not a pipe or a file)")
        if not piped.strip():
            raise UsageError("-p -: stdin held no prompt")
        return piped
    if piped is None or not piped.strip():
        return given
    return f"{given}\n\n<stdin>\n{piped.rstrip()}\n</stdin>"


def _piped_stdin() -> str | None:
    """All of stdin when it is a pipe or a regular file; None for a terminal or anything else."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError):
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
        return None
    return sys.stdin.buffer.read().decode("utf-8", errors="replace")


def _config(args: argparse.Namespace) -> LoopConfig:
    from tui_agent.session import LoopConfig

    workspace = (args.workspace or Path.cwd()).resolve()
    if not workspace.is_dir():
        raise UsageError(f"workspace {workspace} is not a directory")
    if args.script is not None and not Path(args.script).is_file():
        raise UsageError(f"script {args.script} does not exist")
    return LoopConfig(
        workspace=workspace,
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        script=args.script,
        max_steps=args.max_steps,
        max_budget_usd=args.max_budget_usd,
        yolo=args.yolo,
        sandbox=args.sandbox,
        approval_mode=args.approval_mode,
        resume=args.resume,
        continue_latest=args.continue_latest,
        fork=args.fork,
        interactive=args.print_prompt is None,
    )


async def _headless(config: LoopConfig, prompt: str, output_format: str) -> int:
    from tui_agent.session import LoopSetupError, open_loop

    try:
        service = await open_loop(config)
    except LoopSetupError as exc:
        print(f"tui-agent: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        gc.freeze()
        gc.enable()
    stopped = _install_signals(service)
    plans: list[str] = []  # what exit_plan_mode presented (headless plan mode prints it)
    unsubscribe = _echo_events(service, output_format, plans)
    for notice in service.info.notices:
        print(f"tui-agent: {notice}", file=sys.stderr)
    try:
        if service.info.demo:
            print(
                "tui-agent: no API key configured; running the built-in demo provider",
                file=sys.stderr,
            )
        await service.mcp_started()  # MCP tools are offered from the first request
        handle = await service.submit(prompt)
        result = await handle.result()
    finally:
        unsubscribe()
        await service.close()
    if result.type == "completed":
        return EXIT_OK
    if stopped:
        return 128 + stopped[0]
    if result.type == "cancelled":
        return EXIT_CANCELLED
    if result.error is not None:
        print(
            f"tui-agent: {result.error.get('code')}: {result.error.get('message')}", file=sys.stderr
        )
    return EXIT_FAILED


def _echo_events(
    service: AgentLoopService, output_format: str, plans: list[str]
) -> Callable[[], None]:
    from tui_agent.loop import events as ev

    def on_event(event: ev.LoopEvent) -> None:
        if isinstance(event, ev.ToolFinished) and event.status == "denied":
            # Nobody can answer an approval here: say each refusal (its result names the call
            # and how to allow it), whatever the output format, on one line.
            print(f"tui-agent: denied: {' '.join(event.output.split())}", file=sys.stderr)
        if isinstance(event, ev.PlanProposed):
            plans.append(event.plan)
        if output_format == "jsonl":
            if not isinstance(event, ev.MachineTransition):
                sys.stdout.write(event.model_dump_json() + "\n")
                sys.stdout.flush()
        elif isinstance(event, ev.TurnFinished):
            if plans:  # plan mode: the plan is the answer; the model's last words follow it
                sys.stdout.write(plans[-1].rstrip("\n") + "\n\n")
            if event.text:
                sys.stdout.write(event.text.rstrip("\n") + "\n")
            sys.stdout.flush()
        elif isinstance(event, ev.Retrying):
            print(
                f"tui-agent: {event.error_code}: retrying in {event.delay_s:.1f}s "
                f"(attempt {event.attempt}/{event.max_attempts})",
                file=sys.stderr,
            )
        elif isinstance(event, ev.Notice) and event.level != "info":
            print(f"tui-agent: {event.text}", file=sys.stderr)

    return service.subscribe(on_event)


def _install_signals(service: AgentLoopService) -> list[int]:
    """SIGINT, SIGTERM and SIGHUP cancel the turn, which ends the run; a second one exits at
    once. Returns the list that receives the first signal's number (for the exit status)."""
    received: list[int] = []
    loop = asyncio.get_running_loop()
    tasks: set[asyncio.Task[bool]] = set()

    def on_signal(signum: int) -> None:
        if received:
            from tui_agent.tools import kill_tool_processes

            kill_tool_processes()  # os._exit skips every finally and atexit hook
            os._exit(128 + received[0])
        received.append(signum)
        again = "press Ctrl+C again" if signum == signal.SIGINT else "signal again"
        print(f"\ntui-agent: cancelling ({again} to quit at once)", file=sys.stderr)
        tasks.add(loop.create_task(service.cancel()))

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) != signal.SIG_IGN:  # nohup's choice stands
            loop.add_signal_handler(signum, on_signal, signum)
    return received


def _tui(config: LoopConfig, prompt: str | None) -> int:
    from tui_agent.ui.run import run_app

    return run_app(config, prompt)


def _list_sessions(argv: list[str]) -> int:
    from tui_agent.session import Session, list_sessions, print_tree, session_cost
    from tui_agent.usage import usd

    parser = Parser(prog="tui-agent sessions", description="List this workspace's sessions.")
    parser.add_argument("--workspace", type=Path, default=None)
    parser.add_argument("--tree", action="store_true", help="each session's branches beneath it")
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        print(f"tui-agent: {exc}", file=sys.stderr)
        return EXIT_USAGE
    workspace = (args.workspace or Path.cwd()).resolve()
    sessions = list_sessions(workspace)
    if not sessions:
        print(f"No sessions for {workspace}.")
        return EXIT_OK
    for info in sessions:
        session = Session.open(info.session_id)
        cost = session_cost(session.events_path) if session is not None else None
        tokens = f"{cost.usage.total:,} tok" if cost is not None else ""
        money = "" if cost is None else usd(cost.cost_usd)
        line = f"{info.session_id}  {tokens:>13}  {money:>13}  {info.title}"
        if args.tree and session is not None:
            print_tree(session.events_path, line)
        else:
            print(line)
    return EXIT_OK
