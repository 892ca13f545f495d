"""Running the ACP agent: flags, logging to stderr, stdio, and a clean end when the client goes."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import cast

from tui_agent.acp._agent import AcpAgent, AcpDefaults
from tui_agent.acp._stdin import MAX_LINE_BYTES, gate
from tui_agent.providers import PROVIDER_KINDS
from tui_agent.version import package_version

EXIT_OK, EXIT_USAGE = 0, 2


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tui-agent acp",
        description="Serve the agent over the Agent Client Protocol on stdin/stdout.",
    )
    parser.add_argument("--provider", choices=PROVIDER_KINDS)
    parser.add_argument("--model")
    parser.add_argument("--base-url")
    parser.add_argument("--script", help="a JSON script for the scripted provider")
    parser.add_argument("--max-steps", type=int)
    parser.add_argument("--workspace", type=Path, default=None, help="when a client gives no cwd")
    parser.add_argument(
        "--sandbox",
        choices=("workspace-write", "read-only", "off"),
        help="the OS sandbox of commands (default: config.toml's sandbox, else workspace-write)",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage error on stderr
        return EXIT_USAGE if exc.code else EXIT_OK
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="tui-agent acp: %(levelname)s %(message)s"
    )
    defaults = AcpDefaults(
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        script=args.script,
        max_steps=args.max_steps,
        workspace=args.workspace,
        sandbox=args.sandbox,
    )
    asyncio.run(_serve(AcpAgent(defaults, package_version())))
    return EXIT_OK


async def _serve(agent: AcpAgent) -> None:
    from acp import Agent, run_agent, stdio_streams

    serving = asyncio.current_task()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        if serving is not None:
            loop.add_signal_handler(signum, serving.cancel)
    from_client, to_client = await stdio_streams(limit=MAX_LINE_BYTES)
    # The SDK reads what passed the gate (bounded lines of one JSON object each).
    checked = asyncio.StreamReader(limit=MAX_LINE_BYTES + 1)
    gating = asyncio.create_task(gate(from_client, checked, to_client), name="acp-stdin")
    try:
        # The SDK routes each method to the handler of that name and answers "method not
        # found" for those we do not offer (list, fork, resume, close).
        await run_agent(
            cast(Agent, agent), to_client, checked, stdio_buffer_limit_bytes=MAX_LINE_BYTES + 1
        )
    except asyncio.CancelledError:
        pass
    finally:
        gating.cancel()
        await agent.close()  # the client is gone or we were told to stop: end turns, seal logs
