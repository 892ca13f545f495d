"""Our loop behind the Agent Client Protocol: one `AgentLoopService` per ACP session.

`AcpAgent` answers the client's requests (`initialize`, `session/new`, `session/load`,
`session/prompt`, `session/cancel`, `session/set_mode`); each `_Session` follows its loop's
events and sends them, in order, as `session/update` notifications through one sender task, so
a prompt's answer is sent only after every update of its turn. The approval modes are the
session modes (plan, ask, auto-edit, yolo; a change from either side is a
`current_mode_update`). Approvals become `session/request_permission`; "reject always" is
remembered for the session's rule; a plan from `exit_plan_mode` is a permission request whose
options accept it in auto-edit or ask mode, or keep planning.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from acp import PROTOCOL_VERSION, Client, RequestError
from acp import schema as acp

from tui_agent.acp._files import ClientFiles, offers_files
from tui_agent.acp._prompt import prompt_text
from tui_agent.acp._terminal import ClientTerminal, offers_terminal
from tui_agent.acp._translate import Translator, Update, text_block
from tui_agent.loop import events as ev
from tui_agent.loop.api import ApprovalDecision, LoopApi
from tui_agent.session import LoopConfig, LoopSetupError, client_server, open_loop
from tui_agent.vocab import ApprovalMode

log = logging.getLogger(__name__)

MODES: tuple[tuple[ApprovalMode, str, str], ...] = (
    ("plan", "Plan", "Read-only: research, then present a plan to accept"),
    ("ask", "Ask", "Ask before edits and commands"),
    ("auto-edit", "Auto-edit", "Edit files and run sandboxed commands without asking"),
    ("yolo", "Yolo", "Run every tool call without asking"),
)
PERMISSION_OPTIONS = [
    acp.PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    acp.PermissionOption(option_id="allow_always", name="Allow always", kind="allow_always"),
    acp.PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    acp.PermissionOption(option_id="reject_always", name="Reject always", kind="reject_always"),
]
PLAN_OPTIONS = [
    acp.PermissionOption(
        option_id="auto-edit", name="Yes, and auto-accept edits", kind="allow_always"
    ),
    acp.PermissionOption(option_id="ask", name="Yes, and ask before edits", kind="allow_once"),
    acp.PermissionOption(option_id="keep_planning", name="No, keep planning", kind="reject_once"),
]


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


class AcpAgent:
    def __init__(self, defaults: AcpDefaults, version: str) -> None:
        self._defaults = defaults
        self._version = version
        self._client: Client | None = None
        self._client_files = False  # the client offered fs/read_text_file and write_text_file
        self._client_terminal = False  # the client offered terminal/*
        self._sessions: dict[str, _Session] = {}

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
                    image=False, audio=False, embedded_context=True
                ),
                mcp_capabilities=acp.McpCapabilities(http=True, sse=False),
            ),
            agent_info=acp.Implementation(
                name="tui-agent", title="tui-agent", version=self._version
            ),
        )

    async def authenticate(self, method_id: str, **_: Any) -> None:
        return None  # keys come from the environment or config.toml, as for the command line

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> acp.NewSessionResponse:
        session = await self._open(cwd, resume=None, mcp_servers=mcp_servers)
        return acp.NewSessionResponse(session_id=session.id, modes=session.modes())

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> acp.LoadSessionResponse:
        session = await self._open(cwd, resume=session_id, mcp_servers=mcp_servers)
        await session.replay()
        return acp.LoadSessionResponse(modes=session.modes())

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

    async def close(self) -> None:
        """The client is gone: cancel every running turn and seal every log."""
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.close()

    async def _open(
        self, cwd: str, *, resume: str | None, mcp_servers: list[Any] | None = None
    ) -> _Session:
        if self._client is None:
            raise RequestError.internal_error({"reason": "no client connection"})
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
        try:
            loop = await open_loop(config)
        except LoopSetupError as exc:
            raise RequestError.invalid_params({"reason": str(exc)}) from exc
        if files is not None:
            files.session_id = loop.info.session_id
        await loop.mcp_started()  # the first prompt already sees the servers' tools
        session = _Session(loop, self._client)
        if terminal is not None:
            terminal.session_id = session.id
            terminal.shown = session.show_terminal
        self._sessions[session.id] = session
        return session

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"unknown session {session_id!r}"})
        return session


class _Session:
    def __init__(self, loop: LoopApi, client: Client) -> None:
        self.loop = loop
        self.id = loop.info.session_id
        self._client = client
        self._translator = Translator(loop.info.workspace)
        self._updates: asyncio.Queue[Update | None] = asyncio.Queue()
        self._sender = asyncio.create_task(self._send_updates(), name=f"acp-updates:{self.id}")
        self._rejected: set[str] = set()  # rules the user rejected "always" in this session
        self._asking: set[asyncio.Task[None]] = set()
        self._unsubscribe = loop.subscribe(self._on_event)

    def modes(self) -> acp.SessionModeState:
        return acp.SessionModeState(
            current_mode_id=self.loop.info.approval_mode,
            available_modes=[acp.SessionMode(id=m, name=n, description=d) for m, n, d in MODES],
        )

    async def replay(self) -> None:
        for update in self._translator.history(self.loop.history()):
            self._updates.put_nowait(update)
        await self._flushed()

    async def prompt(self, blocks: Sequence[Any]) -> acp.PromptResponse:
        text = prompt_text(blocks)
        if not text.strip():
            raise RequestError.invalid_params({"prompt": "the prompt is empty"})
        handle = await self.loop.submit(text)
        result = await handle.result()
        await self._flushed()
        if result.type == "cancelled":
            return acp.PromptResponse(stop_reason="cancelled")
        if result.type == "failed":
            error = result.error or {}
            if error.get("code") == "loop.max_steps_exceeded":
                return acp.PromptResponse(stop_reason="max_turn_requests")
            raise RequestError.internal_error(
                {"code": error.get("code"), "message": error.get("message")}
            )
        if result.stop_reason in ("content_filter", "refusal"):
            return acp.PromptResponse(stop_reason="refusal")
        return acp.PromptResponse(stop_reason="max_tokens" if result.truncated else "end_turn")

    async def close(self) -> None:
        self._unsubscribe()
        for task in list(self._asking):
            task.cancel()
        await self.loop.close()  # cancels a running turn (every call paired) and seals the log
        self._updates.put_nowait(None)
        with contextlib.suppress(Exception):
            await self._sender

    def show_terminal(self, call_id: str, terminal_id: str) -> None:
        self._updates.put_nowait(self._translator.terminal(call_id, terminal_id))

    def _on_event(self, event: ev.LoopEvent) -> None:
        if isinstance(event, ev.ApprovalRequested):
            task = asyncio.create_task(self._ask(event))
            self._asking.add(task)
            task.add_done_callback(self._asking.discard)
        for update in self._translator.event(event):
            self._updates.put_nowait(update)

    async def _ask(self, request: ev.ApprovalRequested) -> None:
        if request.kind == "plan":
            await self._ask_plan(request)
            return
        decision: ApprovalDecision = "deny"
        if request.rule not in self._rejected:
            await self._flushed()  # the client knows the call before it is asked about it
            try:
                answer = await self._client.request_permission(
                    session_id=self.id,
                    tool_call=self._translator.permission(request),
                    options=PERMISSION_OPTIONS,
                )
                decision = self._decision(answer, request.rule)
            except ConnectionError:
                _client_left(request)
            except Exception:  # a client that cannot answer denies; the model is told
                log.exception("session/request_permission failed")
        await self.loop.answer_approval(request.request_id, decision)

    async def _ask_plan(self, request: ev.ApprovalRequested) -> None:
        mode: ApprovalMode | None = None
        await self._flushed()
        try:
            answer = await self._client.request_permission(
                session_id=self.id,
                tool_call=acp.ToolCallUpdate(
                    tool_call_id=request.call_id,
                    title="Accept this plan?",
                    kind="switch_mode",
                    content=[
                        acp.ContentToolCallContent(
                            type="content", content=text_block(request.preview)
                        )
                    ],
                ),
                options=PLAN_OPTIONS,
            )
            outcome = answer.outcome
            if isinstance(outcome, acp.AllowedOutcome) and outcome.option_id in (
                "auto-edit",
                "ask",
            ):
                mode = "auto-edit" if outcome.option_id == "auto-edit" else "ask"
        except ConnectionError:
            _client_left(request)
        except Exception:  # a client that cannot answer keeps the model planning
            log.exception("session/request_permission for a plan failed")
        if mode is None:
            await self.loop.answer_approval(request.request_id, "deny")
        else:
            await self.loop.answer_approval(request.request_id, "once", mode=mode)

    def _decision(self, answer: acp.RequestPermissionResponse, rule: str) -> ApprovalDecision:
        outcome = answer.outcome
        if not isinstance(outcome, acp.AllowedOutcome):
            return "deny"  # the client cancelled the question (its prompt was cancelled)
        if outcome.option_id == "reject_always":
            self._rejected.add(rule)
        return {"allow_once": "once", "allow_always": "always"}.get(outcome.option_id, "deny")  # type: ignore[return-value]

    async def _send_updates(self) -> None:
        while (update := await self._updates.get()) is not None:
            try:
                await self._client.session_update(session_id=self.id, update=update)
            except ConnectionError:
                pass  # the client went away; the agent closes the loop, which seals the log
            except Exception:
                log.exception("session/update failed")
            finally:
                self._updates.task_done()
        self._updates.task_done()

    async def _flushed(self) -> None:
        await self._updates.join()


def _client_left(request: ev.ApprovalRequested) -> None:
    # The SDK fails every pending request with ConnectionError once the client's input ends:
    # an expected end, worth one line (no traceback); the agent then closes every session.
    log.warning("the client left before answering whether to run %s; denied", request.name)


def _mcp_servers(servers: Sequence[Any], workspace: Path) -> tuple[Any, ...]:
    """The client's MCP servers (stdio and HTTP; SSE is not offered in our capabilities)."""
    configs = []
    for server in servers:
        if isinstance(server, acp.McpServerStdio):
            env = {item.name: item.value for item in server.env}
            configs.append(
                client_server(
                    server.name, workspace, command=server.command, args=server.args, env=env
                )
            )
        elif isinstance(server, acp.HttpMcpServer):
            headers = {item.name: item.value for item in server.headers}
            configs.append(client_server(server.name, workspace, url=server.url, headers=headers))
        else:
            log.warning("MCP server %r: only stdio and http are supported", server.name)
    return tuple(configs)
