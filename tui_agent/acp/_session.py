"""One ACP session: its loop's events sent, in order, as `session/update` notifications through
one sender task (a prompt's answer is sent only after every update of its turn), approvals as
`session/request_permission`, and the prompts it is given. "Reject always" is remembered for
the session's rule; a plan from `exit_plan_mode` is a permission request whose options accept
it in auto-edit or ask mode, or keep planning.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from acp import Client, RequestError
from acp import schema as acp

from tui_agent.acp._commands import Command, Invocation, commands_update, invocation
from tui_agent.acp._prompt import prompt_images, prompt_text
from tui_agent.acp._translate import Translator, Update, plan_update, text_block, usage_update
from tui_agent.loop import events as ev
from tui_agent.loop.api import ApprovalDecision, LoopApi, ModelRefused
from tui_agent.session import attach, image_attachment
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


class Session:
    def __init__(
        self,
        loop: LoopApi,
        client: Client,
        reopen: Callable[[str | None], Awaitable[LoopApi]],
        commands: Sequence[Command] = (),
        model: str | None = None,
        model_choices: Callable[[str], list[str]] = lambda current: [current],
    ) -> None:
        self.loop = loop
        self.model = model  # the model asked for (None: the configured default)
        self._model_choices = model_choices
        self.id = loop.info.session_id
        self._client = client
        self._reopen = reopen  # the session's loop again, with another model
        self.commands = list(commands)
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
        """A loaded session as it stood: its conversation, its plan and its usage."""
        for update in self._translator.history(self.loop.history()):
            self._updates.put_nowait(update)
        if plan := self.loop.snapshot().plan:
            self._updates.put_nowait(plan_update(plan))
        usage = [e for e in self.loop.transcript() if isinstance(e, ev.UsageChanged)]
        if usage:
            self._updates.put_nowait(usage_update(usage[-1]))
        await self._flushed()

    def options(self) -> list[acp.SessionConfigOptionSelect | acp.SessionConfigOptionBoolean]:
        """The session's config options: its model, among those that can run here."""
        current = self.model or self.loop.info.model
        return [
            acp.SessionConfigOptionSelect(
                type="select",
                id="model",
                name="Model",
                category="model",
                current_value=current,
                options=[
                    acp.SessionConfigSelectOption(value=name, name=name)
                    for name in self._model_choices(current)
                ],
            )
        ]

    def announce(self) -> None:
        """What the client learns once it knows the session (after the answer that names it):
        the commands it can offer, and any of its MCP servers that did not start or need a
        login."""
        self._updates.put_nowait(commands_update(self.commands))
        for server in self.loop.mcp_servers():
            if server.source == "client" and server.state == "failed":
                self._say(f"MCP server {server.name} did not start: {server.error}")
            elif server.source == "client" and server.state == "login":
                self._say(f"MCP server {server.name} {server.error}")

    async def set_model(self, model: str) -> None:
        """The same session on another model: its loop is closed and opened again (on the
        model it had when the other cannot be used, and the client is told why)."""
        self._unsubscribe()
        await self.loop.close()
        try:
            self.loop = await self._reopen(model)
            self.model = model
        except RequestError:
            self.loop = await self._reopen(self.model)
            raise
        finally:
            self._unsubscribe = self.loop.subscribe(self._on_event)
        self._updates.put_nowait(
            acp.ConfigOptionUpdate(
                session_update="config_option_update", config_options=self.options()
            )
        )

    async def prompt(self, blocks: Sequence[Any]) -> acp.PromptResponse:
        text = prompt_text(blocks)
        images = await prompt_images(blocks, self.loop.info.provider)
        call = invocation(text, self.commands)
        if call is not None and (call.command is None or call.command.run is not None):
            return await self._answer(call)
        model = None
        if call is not None and call.command is not None and call.command.expand is not None:
            text, model = call.command.expand(call.arguments), call.command.model
        if not text.strip() and not images:
            raise RequestError.invalid_params({"prompt": "the prompt is empty"})
        if images:
            text = attach(text, [image_attachment(name, image) for name, image in images])
        try:
            handle = await self.loop.submit(
                text, images=[image.part for _, image in images], model=model
            )
        except ModelRefused as refused:  # nothing was sent: the editor is told why
            self._say(f"not sent: {refused}")
            await self._flushed()
            return acp.PromptResponse(stop_reason="end_turn")
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

    async def _answer(self, call: Invocation) -> acp.PromptResponse:
        """A built-in command's answer, or an unknown one refused: no model involved."""
        run = call.command.run if call.command is not None else None
        self._say(await run(self, call.arguments) if run else call.refusal(self.commands))
        await self._flushed()
        return acp.PromptResponse(stop_reason="end_turn")

    async def close(self) -> None:
        self._unsubscribe()
        for task in list(self._asking):
            task.cancel()
        await self.loop.close()  # cancels a running turn (every call paired) and seals the log
        self._updates.put_nowait(None)
        with contextlib.suppress(Exception):
            await self._sender

    def _say(self, text: str) -> None:
        self._updates.put_nowait(
            acp.AgentMessageChunk(session_update="agent_message_chunk", content=text_block(text))
        )

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
