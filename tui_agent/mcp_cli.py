"""`tui-agent mcp login NAME` and `tui-agent mcp logout NAME`: OAuth for one MCP server from a
shell, for the headless runs (`-p`) that never open a browser themselves.

The server is looked up as a session would see it (config.toml, then the workspace's
`.mcp.json`), or given by `--url` (an editor's server, which no file names: its tokens are kept
by URL, where its ACP sessions find them); the login opens the browser, prints the URL to
paste where none opens, waits for the redirect on the loopback port, and stores the tokens
where the app finds them.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from tui_agent.session import (
    AppPaths,
    ConfigError,
    client_server,
    load_config,
    load_mcp_servers,
)
from tui_agent.tools.mcp import McpServers

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tui-agent mcp", description="Log in to or out of an MCP server that uses OAuth."
    )
    parser.add_argument("action", choices=("login", "logout"))
    parser.add_argument("name", help="the server's name in config.toml or .mcp.json")
    parser.add_argument(
        "--url",
        default=None,
        help="the server's URL, for one no file names (an editor's, given over ACP)",
    )
    parser.add_argument("--workspace", type=Path, default=None)
    args = parser.parse_args(argv)
    workspace = (args.workspace or Path.cwd()).resolve()
    if args.url is not None:
        given = client_server(args.name, workspace, url=args.url)
        return asyncio.run(_run(args.action, McpServers([given], on_notice=_print), args.name))
    config_file = AppPaths.from_env().config_file
    try:
        setup = load_mcp_servers(load_config(config_file), config_file, workspace)
    except ConfigError as error:
        print(f"tui-agent: {error}", file=sys.stderr)
        return EXIT_USAGE
    for problem in setup.problems:
        print(f"tui-agent: {problem}", file=sys.stderr)
    chosen = [server for server in setup.servers if server.name == args.name]
    if not chosen:
        names = ", ".join(server.name for server in setup.servers) or "none"
        print(f"tui-agent: no MCP server named {args.name!r} (there are: {names})", file=sys.stderr)
        return EXIT_USAGE
    return asyncio.run(_run(args.action, McpServers(chosen, on_notice=_print), args.name))


async def _run(action: str, servers: McpServers, name: str) -> int:
    try:
        problem = await (servers.login(name) if action == "login" else servers.logout(name))
    finally:
        await servers.aclose()
    if problem:
        print(f"tui-agent: {problem}", file=sys.stderr)
        return EXIT_FAILED
    print(f"Logged in to {name}." if action == "login" else f"Logged out of {name}.")
    return EXIT_OK


def _print(level: str, text: str) -> None:
    print(text, file=sys.stderr)
