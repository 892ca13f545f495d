"""`tui-agent serve`: its command line, the printed URL, and stopping on Ctrl+C or SIGTERM.

The app's own options (model, approval mode, workspace, ...) are passed on to each tab's app
process unchanged; the command line checks them first, so a mistake is reported here and not
in every browser tab. A signal ends every tab's app as Ctrl+Q does (turn cancelled, log sealed)
before the server stops; a second signal kills them and exits at once.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import os
import secrets
import shlex
import signal
import sys
from collections.abc import Callable

from aiohttp import web

from tui_agent import keys
from tui_agent.serve._server import web_app
from tui_agent.serve._tabs import TabLimits, Tabs

TOKEN_ENV = "TUI_AGENT_SERVE_TOKEN"
MIN_TOKEN_LENGTH = 16
EXIT_OK, EXIT_USAGE = 0, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-agent serve",
        allow_abbrev=False,  # an abbreviation could take one of the app's options
        description="Serve the full-screen app to a web browser: each tab runs its own app and "
        "session. Open the printed URL; without its token nothing is served.",
        epilog="Any other option is the app's (see tui-agent --help: --workspace, --model, "
        "--approval-mode, ...) and applies to every tab. "
        f"{TOKEN_ENV} fixes the token (at least {MIN_TOKEN_LENGTH} characters) instead of a "
        "random one.",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1; any other prints a warning)",
    )
    parser.add_argument(
        "--port", type=int, default=8765, help="the port (default 8765; 0 picks a free one)"
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=4,
        metavar="N",
        help="at most N tabs' apps at once (default 4)",
    )
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=30.0,
        metavar="MINUTES",
        help="end a tab's app after this long without input from it, cancelling its turn "
        "(default 30; 0 never)",
    )
    parser.add_argument(
        "--print-url",
        action="store_true",
        help="print only the URL on stdout, once the server listens (for scripts)",
    )
    return parser


def main(argv: list[str], check_app_options: Callable[[list[str]], str | None]) -> int:
    args, app_options = _parser().parse_known_args(argv)
    problem = check_app_options(app_options)
    if problem is None and args.max_sessions < 1:
        problem = "--max-sessions must be 1 or more"
    if problem is None and args.idle_timeout < 0:
        problem = "--idle-timeout must be 0 (never) or more"
    token = keys.lookup(TOKEN_ENV) or secrets.token_urlsafe(32)
    if problem is None and len(token) < MIN_TOKEN_LENGTH:
        problem = f"{TOKEN_ENV} must be at least {MIN_TOKEN_LENGTH} characters"
    if problem is not None:
        print(f"tui-agent serve: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if not _is_loopback(args.host):
        print(
            f"tui-agent serve: warning: listening on {args.host}, not only this machine: anyone "
            "who can reach it and has the URL can run commands as you, and plain HTTP carries "
            "the token readably (put TLS in front on a network you do not trust)",
            file=sys.stderr,
        )
    limits = TabLimits(
        max_sessions=args.max_sessions,
        idle_s=args.idle_timeout * 60 or None,
    )
    tabs = Tabs(_app_command(app_options), _keys_for_apps(), limits)
    return asyncio.run(_serve(web_app(token, tabs), tabs, args.host, args.port, token, args))


def _app_command(app_options: list[str]) -> str:
    # `exec`: the shell textual-serve starts the command with gives way to the app, so no
    # process of the user's holds the keys in its environment (the app wipes them from its
    # environment block at once, `keys.protect`).
    return "exec " + shlex.join([sys.executable, "-m", "tui_agent", *app_options])


def _keys_for_apps() -> dict[str, str]:
    """The keys this process holds apart (`keys`), which each app needs as the terminal's app
    gets them: from its environment. The server's token is not for the apps."""
    return {
        name: value
        for name, value in keys.environ().items()
        if keys.is_key(name) and name != TOKEN_ENV
    }


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _url(host: str, port: int, token: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/?token={token}"


async def _serve(
    app: web.Application, tabs: Tabs, host: str, port: int, token: str, args: argparse.Namespace
) -> int:
    stopping = asyncio.Event()
    signals: list[int] = []

    def on_signal(signum: int) -> None:
        if signals:  # the second one: no more waiting
            tabs.kill_all()
            os._exit(128 + signals[0])
        signals.append(signum)
        stopping.set()

    # From the start: a script may signal as soon as it has read the URL.
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, on_signal, signum)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)  # URLs hold the token
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as exc:
        await runner.cleanup()
        print(f"tui-agent serve: cannot listen on {host}:{port}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    url = _url(host, runner.addresses[0][1], token)
    if args.print_url:
        print(url, flush=True)
        # textual-serve copies an app's error output to stdout: a script reads only the URL
        sys.stdout = sys.stderr
    else:
        print(f"tui-agent serve: open {url}", flush=True)
        print("Ctrl+C stops the server (each tab's turn is cancelled first).", flush=True)
    await stopping.wait()
    print(
        f"\ntui-agent serve: stopping {len(tabs)} app(s), cancelling their turns "
        "(signal again to quit at once)",
        file=sys.stderr,
    )
    await tabs.end_all()
    await runner.cleanup()
    return EXIT_OK
