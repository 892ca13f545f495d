"""`tui-agent replay`: play a recorded session in the app, or check that it reruns identically.

    tui-agent replay SESSION                 the player (the app, paced by the person)
    tui-agent replay --check SESSION         exit 0: identical; 1: the first divergence
    tui-agent replay --check --all           every session of the workspace, as a table

SESSION is a session id or the path of an `events.jsonl`. `--check` also reruns each of the
session's sub-agent logs (`tasks/*.jsonl`): they are logs of loops like any other. Exit 2 for
wrong arguments or a session that does not exist.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from tui_agent.cli_parsing import Parser, UsageError
from tui_agent.lazy_dataclass import dataclass
from tui_agent.rerun import Verdict, check_path
from tui_agent.session import Session, list_sessions

EXIT_OK, EXIT_DIFFERS, EXIT_USAGE = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="tui-agent replay",
        description="Play a recorded session through the real machines, or check that it "
        "reruns identically.",
    )
    parser.add_argument("session", nargs="?", help="a session id, or the path of events.jsonl")
    parser.add_argument("--check", action="store_true", help="rerun without a screen, compare")
    parser.add_argument("--all", action="store_true", help="with --check: every session here")
    parser.add_argument("--workspace", type=Path, default=None)
    return parser


@dataclass(frozen=True)
class _Log:
    name: str  # how the report names it
    path: Path


def main(argv: list[str]) -> int:
    try:
        args = _parser().parse_args(argv)
        if args.all and not args.check:
            raise UsageError("--all goes with --check")
        if args.all:
            workspace = (args.workspace or Path.cwd()).resolve()
            return _check_all(workspace)
        if args.session is None:
            raise UsageError("name a session (an id from `tui-agent sessions`)")
        events = _events_path(args.session)
    except UsageError as exc:
        print(f"tui-agent replay: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.check:
        return _check_one(events)
    from tui_agent.ui.replay_player import play

    return play(events)


def _events_path(session: str) -> Path:
    given = Path(session)
    if given.suffix == ".jsonl" and given.is_file():
        return given
    found = Session.open(session)
    if found is None or not found.events_path.is_file():
        raise UsageError(f"no session {session!r}")
    return found.events_path


def _logs(events: Path) -> list[_Log]:
    """The session's own log, then its sub-agents' logs."""
    tasks = sorted((events.parent / "tasks").glob("*.jsonl"))
    return [_Log(events.name, events), *(_Log(f"tasks/{path.name}", path) for path in tasks)]


def _verdicts(events: Path) -> list[tuple[_Log, Verdict]]:
    async def run() -> list[tuple[_Log, Verdict]]:
        return [(log, await check_path(log.path)) for log in _logs(events)]

    return asyncio.run(run())


def _check_one(events: Path) -> int:
    verdicts = _verdicts(events)
    for log, verdict in verdicts:
        print(f"{log.name}: {verdict.describe()}")
    return EXIT_OK if all(verdict.ok for _, verdict in verdicts) else EXIT_DIFFERS


def _check_all(workspace: Path) -> int:
    sessions = list_sessions(workspace)
    if not sessions:
        print(f"No sessions for {workspace}.")
        return EXIT_OK
    rows: list[tuple[str, str, str]] = []
    failed = False
    for info in sessions:
        session = Session.open(info.session_id)
        if session is None or not session.events_path.is_file():
            continue
        verdicts = _verdicts(session.events_path)
        records = sum(verdict.records for _, verdict in verdicts)
        bad = [(log, verdict) for log, verdict in verdicts if not verdict.ok]
        failed = failed or bool(bad)
        if bad:
            log, verdict = bad[0]
            first_line = verdict.describe().splitlines()[0]
            result = f"{log.name}: {first_line}"
        else:
            result = f"identical ({len(verdicts)} log{'s' if len(verdicts) > 1 else ''})"
        rows.append((info.session_id, str(records), result))
    width = max(len(row[0]) for row in rows) if rows else 7
    print(f"{'session':<{width}}  {'records':>7}  result")
    for session_id, count, result in rows:
        print(f"{session_id:<{width}}  {count:>7}  {result}")
    return EXIT_DIFFERS if failed else EXIT_OK
