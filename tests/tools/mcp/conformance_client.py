"""The client the official MCP conformance suite runs: our real MCP client through one scenario.

The suite starts a test server (and, for `auth/*`, an authorization server), then runs
`python -m tests.tools.mcp.conformance_client URL` with the scenario's name in
`MCP_CONFORMANCE_SCENARIO` and, where it pre-registers a client, its credentials in
`MCP_CONFORMANCE_CONTEXT`. This script does what a person does in the app: the servers start
(a server that needs a login says so), `/mcp login` runs the login, then the model calls each
tool. Only two things stand in for the person: the "browser" is an HTTP client that follows
the authorization server's redirects back to our loopback server, and the elicitation form is
accepted as pre-filled (the schema's defaults). Exit status 0: the scenario ran to its end.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.support.browser import approve_in_browser
from tui_agent.tools import ToolContext, Workspace
from tui_agent.tools.elicitation import ElicitAnswer, ElicitRequest
from tui_agent.tools.mcp import McpOAuth, McpServerConfig, McpServers
from tui_agent.vocab import AbortSignal

NAME = "conformance"
# The URL-named client the suite's `auth/basic-cimd` authorization server expects.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
ARGUMENTS = {"add_numbers": {"a": 5, "b": 3}}


async def accept_prefilled(request: ElicitRequest) -> ElicitAnswer:
    content, problems = request.check(request.defaults())
    return ElicitAnswer("cancel") if problems else ElicitAnswer("accept", content)


async def run(url: str, scenario: str, context: dict[str, Any], store: Path) -> int:
    key_file = None
    if "private_key_pem" in context:
        key_file = store / "client-key.pem"
        key_file.write_text(context["private_key_pem"])
    oauth = McpOAuth(
        store=str(store),
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        client_metadata_url=CLIENT_METADATA_URL if scenario == "auth/basic-cimd" else None,
        # The machine-identity scenarios: configured as such a client would be.
        grant="client_credentials"
        if scenario.startswith("auth/client-credentials")
        else ("authorization_code"),
        private_key_file=str(key_file) if key_file else None,
        signing_algorithm=context.get("signing_algorithm", "RS256"),
    )
    config = McpServerConfig(name=NAME, transport="http", url=url, oauth=oauth)
    servers = McpServers(
        [config], on_notice=lambda level, text: print(level, text), browser=approve_in_browser
    )
    servers.elicit = accept_prefilled
    try:
        servers.start()
        await servers.wait_started()
        if servers.statuses()[0].state == "login":
            problem = await servers.login(NAME)
            if problem:
                print(problem, file=sys.stderr)
                return 1
        status = servers.statuses()[0]
        if status.state != "ready":
            print(f"{status.state}: {status.error}", file=sys.stderr)
            return 1
        signal = AbortSignal()
        ctx = ToolContext(signal, lambda u: None, lambda a: None, Workspace(Path.cwd()), "c1")
        for tool in servers.tools():
            args = tool.Args.model_validate(ARGUMENTS.get(tool.remote_name, {}))
            result = await tool.execute(args, ctx)
            print(tool.remote_name, result.model_dump_json())
        return 0
    finally:
        await servers.aclose()


def main() -> int:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with tempfile.TemporaryDirectory() as store:
        return asyncio.run(run(url, scenario, context, Path(store)))


if __name__ == "__main__":
    sys.exit(main())
