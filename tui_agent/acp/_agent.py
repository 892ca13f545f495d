"""Our loop behind the Agent Client Protocol: one `AgentLoopService` per ACP session.

`AcpAgent` answers the client's requests (`initialize`, `authenticate`, `session/new`,
`session/load`, `session/list`, `session/prompt`, `session/cancel`, `session/set_mode`,
`session/set_config_option`); each `Session` (`_session`) follows its loop. The approval modes
are the session modes (plan, ask, auto-edit, yolo; a change from either side is a
`current_mode_update`); the model is the session's one config option. With no key configured
the client is asked to authenticate, and the built-in demo is one of the methods.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from acp import PROTOCOL_VERSION, Client, RequestError
from acp import schema as acp

from tui_agent.acp._commands import available, custom_commands
from tui_agent.acp._files import ClientFiles, offers_files
from tui_agent.acp._models import missing_key, model_choices
from tui_agent.acp._session import MODES, Session
from tui_agent.acp._terminal import ClientTerminal, offers_terminal
from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop.api import LoopApi
from tui_agent.session import (
    LoopConfig,
    LoopSetupError,
    client_server,
    list_sessions,
    open_loop,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AcpDefaults:
    """What `tui-agent acp` was started with; each session's loop is opened with these."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    script: str | None = None
    max_steps: int | None = None
    workspace: Path | None = None
    sandbox: Literal["workspace-write", "read-only", "off"] | None = None


AUTH_METHODS = [
    acp.AuthMethodAgent(
        id="api-key",
        name="Set an API key",
        description=(
            "Set OPENAI_API_KEY or ANTHROPIC_API_KEY in the environment your editor starts "
            "tui-agent with (Zed: agent_servers.tui-agent.env), or configure a provider in "
            "config.toml; then start a new session."
        ),
    ),
    acp.AuthMethodAgent(
        id="demo",
        name="Built-in demo",
        description="No model: a scripted demo of what the agent does, to try it without a key.",
    ),
]
SESSIONS_PAGE = 50


class AcpAgent:
    def __init__(self, defaults: AcpDefaults, version: str) -> None:
        self._defaults = defaults
        self._version = version
        self._client: Client | None = None
        self._client_files = False  # the client offered fs/read_text_file and write_text_file
        self._client_terminal = False  # the client offered terminal/*
        self._demo = False  # the client chose the built-in demo (the "demo" auth method)
        self._sessions: dict[str, Session] = {}

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, **_: Any
    ) -> acp.InitializeResponse:
        self._client_files = offers_files(client_capabilities)
        self._client_terminal = offers_terminal(client_capabilities)
        return acp.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=acp.AgentCapabilities(
                load_session=True,
                prompt_capabilities=acp.PromptCapabilities(
                    image=True, audio=False, embedded_context=True
                ),
                mcp_capabilities=acp.McpCapabilities(http=True, sse=True),
                session_capabilities=acp.SessionCapabilities(list=acp.SessionListCapabilities()),
            ),
            auth_methods=AUTH_METHODS if self._missing_key() else [],
            agent_info=acp.Implementation(
                name="tui-agent", title="tui-agent", version=self._version
            ),
        )

    async def authenticate(self, method_id: str, **_: Any) -> acp.AuthenticateResponse:
        if method_id == "demo":
            self._demo = True
        elif method_id != "api-key":
            raise RequestError.invalid_params({"methodId": f"unknown method {method_id!r}"})
        elif reason := self._missing_key():  # a key set in config.toml since counts at once
            raise RequestError.auth_required({"reason": reason, "how": AUTH_METHODS[0].description})
        return acp.AuthenticateResponse()

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> acp.NewSessionResponse:
        session = await self._open(cwd, resume=None, mcp_servers=mcp_servers)
        session.announce()
        return acp.NewSessionResponse(
            session_id=session.id, modes=session.modes(), config_options=session.options()
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> acp.LoadSessionResponse:
        session = await self._open(cwd, resume=session_id, mcp_servers=mcp_servers)
        await session.replay()
        session.announce()
        return acp.LoadSessionResponse(modes=session.modes(), config_options=session.options())

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> acp.ListSessionsResponse:
        """The sessions of a workspace (the default one without `cwd`), latest first, in
        pages; the cursor is where the next page starts."""
        workspace = Path(cwd) if cwd else (self._defaults.workspace or Path.cwd())
        start = int(cursor) if cursor and cursor.isdigit() else 0
        found = list_sessions(workspace)
        page = found[start : start + SESSIONS_PAGE]
        more = start + SESSIONS_PAGE < len(found)
        return acp.ListSessionsResponse(
            sessions=[
                acp.SessionInfo(
                    session_id=info.session_id,
                    cwd=str(info.workspace),
                    title=info.title or None,
                    updated_at=datetime.fromtimestamp(info.last_active, UTC).isoformat(),
                )
                for info in page
            ],
            next_cursor=str(start + SESSIONS_PAGE) if more else None,
        )

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> acp.PromptResponse:
        return await self._session(session_id).prompt(prompt)

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            await session.loop.cancel()

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> None:
        session = self._session(session_id)
        mode = next((m for m, _, _ in MODES if m == mode_id), None)
        if mode is None:
            raise RequestError.invalid_params({"modeId": f"unknown mode {mode_id!r}"})
        session.loop.set_approval_mode(mode)

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> acp.SetSessionConfigOptionResponse:
        """The one option is the session's model (`session/set_model` is not in the schema)."""
        session = self._session(session_id)
        if config_id != "model" or not isinstance(value, str):
            raise RequestError.invalid_params({"configId": f"no option {config_id!r}"})
        await session.set_model(value)
        return acp.SetSessionConfigOptionResponse(config_options=session.options())

    async def close(self) -> None:
        """The client is gone: cancel every running turn and seal every log."""
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.close()

    async def _open(
        self, cwd: str, *, resume: str | None, mcp_servers: list[Any] | None = None
    ) -> Session:
        if self._client is None:
            raise RequestError.internal_error({"reason": "no client connection"})
        if not self._demo and (reason := self._missing_key()):
            raise RequestError.auth_required({"reason": reason})
        workspace = Path(cwd) if cwd else (self._defaults.workspace or Path.cwd())
        if not workspace.is_dir():
            raise RequestError.invalid_params({"cwd": f"{workspace} is not a directory"})
        files = ClientFiles(self._client) if self._client_files else None
        terminal = ClientTerminal(self._client) if self._client_terminal else None
        config = LoopConfig(
            workspace=workspace.resolve(),
            provider=self._defaults.provider,
            model=self._defaults.model,
            base_url=self._defaults.base_url,
            script=self._defaults.script,
            max_steps=self._defaults.max_steps,
            sandbox=self._defaults.sandbox,
            resume=resume,
            interactive=True,
            mcp_servers=_mcp_servers(mcp_servers or (), workspace.resolve()),
            workspace_mcp=False,  # the client says which MCP servers this session has
            editor_files=files,
            editor_terminal=terminal,
        )
        loop = await _opened(config)
        if files is not None:
            files.session_id = loop.info.session_id
        config = replace(config, resume=loop.info.session_id)

        async def reopen(model: str | None) -> LoopApi:
            return await self._reopen(replace(config, model=model), loop.info.demo)

        session = Session(
            loop,
            self._client,
            reopen,
            available(custom_commands(workspace, yolo=config.yolo)),
            model=self._defaults.model,
            model_choices=lambda current: model_choices(
                current, self._defaults.provider, self._defaults.base_url
            ),
        )
        if terminal is not None:
            terminal.session_id = session.id
            terminal.shown = session.show_terminal
        self._sessions[session.id] = session
        return session

    async def _reopen(self, config: LoopConfig, demo: bool) -> LoopApi:
        loop = await _opened(config)
        if loop.info.demo and not demo:  # no key for that model's provider: not a silent demo
            await loop.close()
            raise RequestError.invalid_params({"model": f"{config.model}: no key for it"})
        return loop

    def _missing_key(self) -> str | None:
        defaults = self._defaults
        if defaults.script is not None or defaults.provider == "scripted":
            return None  # the scripted provider was asked for by name
        return missing_key(defaults.provider, defaults.model, defaults.base_url)

    def _session(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"unknown session {session_id!r}"})
        return session


async def _opened(config: LoopConfig) -> LoopApi:
    try:
        loop = await open_loop(config)
    except LoopSetupError as exc:
        raise RequestError.invalid_params({"reason": str(exc)}) from exc
    await loop.mcp_started()  # the first prompt already sees the servers' tools
    return loop


def _mcp_servers(servers: Sequence[Any], workspace: Path) -> tuple[Any, ...]:
    """The client's MCP servers: stdio, streamable HTTP and legacy SSE (an `acp` one, carried
    over the ACP connection itself, is not offered in our capabilities)."""
    configs = []
    for server in servers:
        if isinstance(server, acp.McpServerStdio):
            env = {item.name: item.value for item in server.env}
            configs.append(
                client_server(
                    server.name, workspace, command=server.command, args=server.args, env=env
                )
            )
        elif isinstance(server, acp.HttpMcpServer | acp.SseMcpServer):
            headers = {item.name: item.value for item in server.headers}
            transport: Literal["http", "sse"] = (
                "sse" if isinstance(server, acp.SseMcpServer) else "http"
            )
            configs.append(
                client_server(
                    server.name, workspace, url=server.url, headers=headers, transport=transport
                )
            )
        else:
            log.warning("MCP server %r: only stdio, http and sse are supported", server.name)
    return tuple(configs)
