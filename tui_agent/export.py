"""`tui-agent export [SESSION_ID] [--format md|html|jsonl] [--branch N] [-o FILE]`: a session,
written out.

Without an id it exports the latest session of the workspace (the current directory, or
`--workspace`); Markdown goes to stdout unless `-o` names a file. `--branch N` exports branch
N of the session tree (`tui-agent sessions --tree` numbers them), by default the branch the
session is on. Exit status 0 on success,
2 when the arguments are wrong, there is no such session, or the file cannot be written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tui_agent.cli_parsing import Parser, UsageError
from tui_agent.context import EventLogError, gc_paused, read_log
from tui_agent.session import FORMATS, Session, export_file, export_session, on_branch

EXIT_OK, EXIT_USAGE = 0, 2


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="tui-agent export", description="Export a session.")
    parser.add_argument("session_id", nargs="?", help="default: the latest of the workspace")
    parser.add_argument("--format", choices=FORMATS, default="md")
    parser.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    parser.add_argument("--branch", type=int, help="default: the one the session is on")
    parser.add_argument("--workspace", type=Path, default=None)
    return parser


def main(argv: list[str]) -> int:
    # The export builds a day's events and records once and drops them at exit: collections
    # walking them found nothing and were a quarter of its CPU (`benchmarks/long_day_resume.py`).
    try:
        args = _parser().parse_args(argv)
        session = _session(args)
        with gc_paused():
            if args.output is None:
                records = on_branch(read_log(session.events_path), args.branch)
                sys.stdout.write(export_session(records, args.format, session.dir / "tasks"))
            else:
                export_file(session.session_id, args.format, args.output, branch=args.branch)
    except (UsageError, ValueError, EventLogError, OSError) as exc:
        print(f"tui-agent export: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


def _session(args: argparse.Namespace) -> Session:
    if args.session_id is not None:
        session = Session.open(args.session_id)
        if session is None:
            raise UsageError(f"no session {args.session_id!r}")
    else:
        workspace = (args.workspace or Path.cwd()).resolve()
        session = Session.latest_for(workspace)
        if session is None:
            raise UsageError(f"no session for {workspace}")
    return session
