"""Building a loop: from command-line choices to a running `AgentLoopService`.

`open_loop(config)` resolves the model (flags, environment, config.toml, or the offline demo),
opens or creates the session (`--continue`, `--resume`), folds its event log back into history,
builds the provider, the tools (registry, executor, approvals) and the journal, wires the
adapters to the kernel and starts it. It must run inside the event loop that will drive the
machines (the Textual app's, or `asyncio.run` for headless runs).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.context import (
    CompactionFailed,
    EventLog,
    SessionMeta,
    compact,
    estimate_tokens,
    fold,
    project,
    read_log,
)
from tui_agent.kernel import KernelOptions
from tui_agent.llm import Provider, ProviderSettings, make_provider
from tui_agent.loop.adapters.engine import Engine
from tui_agent.loop.adapters.requester import LoopRequester
from tui_agent.loop.adapters.tools import LoopToolRunner
from tui_agent.loop.api import ApprovalMode, LoopInfo
from tui_agent.loop.journal import LogJournal
from tui_agent.loop.service import (
    AgentLoopService,
    ErrorContext,
    LoopErrorHandler,
    LoopOptions,
    StepBeginContext,
    is_context_overflow,
)
from tui_agent.session import (
    ConfigError,
    ResolvedModel,
    Session,
    build_system_prompt,
    load_config,
    load_instructions,
    resolve,
)
from tui_agent.tools import (
    ApprovalRequest,
    Approvals,
    BatchExecutor,
    Decision,
    Tool,
    Workspace,
    default_registry,
)
from tui_agent.vocab import HistoryEntry, LLMRequest

COMPACT_AT = 0.85  # of the model's context window, checked before every step


class LoopSetupError(Exception):
    """Configuration or session problems a user must fix (exit status 2)."""


@dataclass(frozen=True)
class LoopConfig:
    workspace: Path
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    script: str | None = None
    max_steps: int | None = None
    yolo: bool = False
    resume: str | None = None
    continue_latest: bool = False
    interactive: bool = True  # False: headless, approvals that would ask are denied
    approval_mode: ApprovalMode | None = None


async def open_loop(config: LoopConfig) -> AgentLoopService:
    try:
        settings = load_config()
        resolved = resolve(
            settings,
            provider=config.provider,
            model=config.model,
            base_url=config.base_url,
            script=config.script,
        )
    except ConfigError as exc:
        raise LoopSetupError(str(exc)) from exc
    session, history = _open_session(config)
    mode: ApprovalMode = "yolo" if config.yolo else (config.approval_mode or settings.approval_mode)
    max_steps = config.max_steps if config.max_steps is not None else settings.max_steps_per_turn
    provider = make_provider(
        ProviderSettings(
            kind=resolved.provider_kind,
            model=resolved.model,
            base_url=resolved.base_url,
            api_key=resolved.api_key,
            echo_reasoning=resolved.echo_reasoning,
            max_tokens=resolved.max_output_tokens,
            script_path=str(resolved.script) if resolved.script else None,
            workspace=str(config.workspace),
        )
    )
    log = EventLog(session.events_path)
    if not history:
        log.write(
            SessionMeta(
                session_id=session.session_id,
                workspace=str(config.workspace),
                provider=resolved.provider_kind,
                model=resolved.model,
            )
        )
    return await build_loop(
        provider=provider,
        resolved=resolved,
        workspace=config.workspace,
        spill_dir=session.spill_dir,
        log=log,
        session_id=session.session_id,
        history=history,
        approval_mode=mode,
        interactive=config.interactive,
        options=LoopOptions(
            max_steps=max_steps or 0,
            max_attempts_per_step=settings.max_attempts_per_step,
        ),
    )


def _open_session(config: LoopConfig) -> tuple[Session, list[HistoryEntry]]:
    if config.resume is not None:
        session = Session.open(config.resume)
        if session is None:
            raise LoopSetupError(f"no session {config.resume!r}")
    elif config.continue_latest:
        session = Session.latest_for(config.workspace)
        if session is None:
            raise LoopSetupError(f"no earlier session for {config.workspace} to continue")
    else:
        return Session.create(config.workspace), []
    return session, fold(read_log(session.events_path))


async def build_loop(
    *,
    provider: Provider,
    resolved: ResolvedModel,
    workspace: Path,
    spill_dir: Path,
    log: EventLog,
    session_id: str,
    history: Sequence[HistoryEntry] = (),
    approval_mode: ApprovalMode = "ask",
    interactive: bool = True,
    options: LoopOptions = LoopOptions(),
    extra_tools: Sequence[Tool[Any]] = (),
) -> AgentLoopService:
    """Wire a service from parts; tests use it with their own provider, paths and tools."""
    root = Workspace(workspace, readable=(spill_dir,))
    registry = default_registry(root)
    for tool in extra_tools:
        registry.register(tool)
    instructions = load_instructions(workspace)
    system = build_system_prompt(workspace, instructions, registry.names)
    service = AgentLoopService(
        info=LoopInfo(
            provider=resolved.provider_kind,
            model=resolved.model,
            context_window=resolved.context_window,
            approval_mode=approval_mode,
            session_id=session_id,
            workspace=str(workspace),
            demo=resolved.demo,
        ),
        options=options,
    )

    async def ask(request: ApprovalRequest) -> Decision:
        kind, reason = await service.ask_approval(
            request.request_id,
            request.call_id,
            request.tool_name,
            request.description,
            request.rule,
            request.preview,
        )
        return Decision(kind, reason)

    approvals = Approvals(approval_mode, ask=ask if interactive else None)
    service.bind_approval_mode(lambda mode: setattr(approvals, "mode", mode))
    executor = BatchExecutor(registry, root, approvals, spill_dir)
    journal = LogJournal(log)

    def build_request(history: Sequence[HistoryEntry]) -> LLMRequest:
        return LLMRequest(
            model=provider.model,
            system=system,
            messages=tuple(project(service.view(history))),
            tools=tuple(registry.specs()),
            max_tokens=resolved.max_output_tokens,
            echo_reasoning=resolved.echo_reasoning,
        )

    runner = LoopToolRunner(
        executor, on_state=lambda call_id, state: engine.set_tool_state(call_id, state)
    )
    requester = LoopRequester(lambda: provider, service.gate, build_request)
    engine = Engine(
        requester=requester,
        tool_runner=runner,
        journal=journal,
        listener=service,
        options=KernelOptions(
            max_steps=options.max_steps,
            max_attempts_per_step=options.max_attempts_per_step,
            abort_timeout_s=options.abort_timeout_s,
            abort_grace_s=options.abort_grace_s,
            provider=resolved.provider_kind,
            model=resolved.model,
        ),
        history=history,
        prompt_gate=None,
        clock=time.time,
    )
    service.bind_engine(engine, journal)

    async def summarise(entries: Sequence[HistoryEntry]) -> Any:
        result = await compact(
            entries,
            provider,
            provider.model,
            system=system,
            tools=registry.specs(),
            context_window=resolved.context_window,
        )
        if isinstance(result, CompactionFailed):
            return result.message
        return (
            result.history,
            result.summary,
            result.kept,
            result.tokens_before,
            result.tokens_after,
        )

    service.set_compactor(summarise)
    service.register_loop_error_handler(
        LoopErrorHandler("compaction", is_context_overflow, _compact_and_retry(service))
    )
    service.on_will_begin_step.register("compaction", _proactive_compaction(service, system))

    async def close() -> None:
        await runner.aclose()
        await log.close()
        await provider.aclose()

    service.on_close(close)
    await service.start()
    return service


def _compact_and_retry(service: AgentLoopService) -> Any:
    async def handle(ctx: ErrorContext) -> bool:
        if not await service.compact_in_gate(service.engine.agent.history):
            return False
        ctx.retry()
        return True

    return handle


def _proactive_compaction(service: AgentLoopService, system: str) -> Any:
    async def hook(ctx: StepBeginContext, next_: Any) -> None:
        window = service.info.context_window
        view = service.view(ctx.history)
        if window and estimate_tokens(view, system=system) > COMPACT_AT * window:
            await service.compact_in_gate(ctx.history)
        await next_(None)

    return hook
