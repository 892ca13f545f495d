"""Opening a loop for the command line: from flags to a running `AgentLoopService`.

`open_loop(config)` resolves the model (flags, environment, config.toml, or the offline demo),
opens or creates the session (`--continue`, `--resume`, `--fork` for a copy) and takes its
one-writer lock, folds its event log back into history (repairing what a crash left open,
skipping damaged lines with a notice), builds the provider and the system prompt with the
workspace's instructions, reads the MCP servers (`config.toml` and the workspace's `.mcp.json`),
the permission rules and the hook commands (`config.toml`, Claude Code's and the project's
settings files: `session._repository.read_setup`), says which of the repository's items were
skipped for want of trust, and hands everything to `loop.factory.build_loop`. It must run
inside the event loop that will drive the machines.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from tui_agent import keys
from tui_agent.context import (
    EventLog,
    EventLogError,
    Record,
    SessionMeta,
    describe_bad_lines,
    fold_log,
    read_log,
)
from tui_agent.lazy_dataclass import dataclass
from tui_agent.llm import Provider, ProviderSettings, make_provider
from tui_agent.loop.api import LoopInfo
from tui_agent.loop.costs import Budget, Metering
from tui_agent.loop.factory import build_loop
from tui_agent.loop.journal import LogJournal
from tui_agent.loop.replay import replay
from tui_agent.loop.service import AgentLoopService, LoopOptions
from tui_agent.loop.userhooks import UserHooks
from tui_agent.session._config import Config, ConfigError
from tui_agent.session._costs import api_host, named_pricer
from tui_agent.session._instructions import build_system_prompt
from tui_agent.session._launch import LoopConfig, LoopSetupError
from tui_agent.session._lock import SessionBusyError, SessionLock
from tui_agent.session._mcp import McpSetup, WorkspaceTrust
from tui_agent.session._memory_files import NestedMemory, load_instructions
from tui_agent.session._paths import AppPaths
from tui_agent.session._permissions import PermissionSetup, RuleFiles
from tui_agent.session._repository import WorkspaceSetup, pending, read_setup, skipped_notice
from tui_agent.session._resolve import ResolvedModel, resolve
from tui_agent.session._sessions import Session
from tui_agent.session._skills import SkillSetup, SkillTrust, load_skills, skill_notices
from tui_agent.session._turn_models import model_pricer, turn_models
from tui_agent.tools import (
    AddressGuard,
    Sandbox,
    SandboxMode,
    SandboxPolicy,
    SkillTool,
    Tool,
    WebFetch,
    WebSearch,
    open_sandbox,
)
from tui_agent.vocab import ApprovalMode


async def open_loop(config: LoopConfig) -> AgentLoopService:
    try:
        setup = read_setup(config)
        settings, config_file, mcp = setup.settings, setup.config_file, setup.mcp
        trust, permissions = setup.rule_trust, setup.permissions
        resolved = resolve(
            settings,
            provider=config.provider,
            model=config.model,
            base_url=config.base_url,
            script=config.script,
        )
    except ConfigError as exc:
        raise LoopSetupError(str(exc)) from exc
    # The command line did this before anything else (see `keys.protect`); again here for
    # callers that skip it, so tools never inherit a key either way.
    keys.configure(
        settings.secret_env, [p.api_key_env for p in settings.providers.values() if p.api_key_env]
    )
    try:
        provider = _provider(config, settings, resolved)
    except ValueError as exc:  # an unreadable --script file
        raise LoopSetupError(str(exc)) from exc
    # Folding a long session's log takes a while, probing the sandbox starts a process: both
    # off the (UI's) event loop, side by side (the probe never raises).
    sandbox, opened = await asyncio.gather(
        asyncio.to_thread(open_sandbox, sandbox_policy(settings, config.sandbox)),
        asyncio.to_thread(_open_session, config),
    )

    async def unlock() -> None:  # the loop's last close step
        opened.lock.release()

    try:
        rule_files = RuleFiles(config.workspace, config_file, trust)
        return await _build(
            config,
            settings,
            resolved,
            provider,
            opened,
            mcp,
            sandbox,
            (permissions, rule_files),
            unlock,
            setup,
        )
    except BaseException:
        opened.lock.release()
        raise


def sandbox_policy(settings: Config, mode: SandboxMode | None) -> SandboxPolicy:
    """The commands' sandbox policy: `--sandbox` over config.toml; tui-agent's own config and
    sessions folders are hidden with the secrets."""
    paths = AppPaths.from_env()
    own = (str(paths.config_file.parent), str(paths.data_dir))
    return SandboxPolicy(
        mode=mode or settings.sandbox,
        network=settings.sandbox_network,
        hide=(*own, *settings.sandbox_hide),
    )


@dataclass(frozen=True)
class _Opened:
    session: Session
    lock: SessionLock
    records: list[Record]
    notices: tuple[str, ...]  # for the user: what was wrong with the log


async def _build(
    config: LoopConfig,
    settings: Config,
    resolved: ResolvedModel,
    provider: Provider,
    opened: _Opened,
    mcp: McpSetup,
    sandbox: Sandbox,
    rules: tuple[PermissionSetup, RuleFiles],
    unlock: Callable[[], Awaitable[None]],
    setup: WorkspaceSetup,
) -> AgentLoopService:
    session, records = opened.session, opened.records
    # Folding and replaying a long session's log takes a while: off the (UI's) event loop.
    history, transcript = await asyncio.to_thread(
        lambda: (fold_log(records), replay(records, context_window=resolved.context_window))
    )
    mode: ApprovalMode = "yolo" if config.yolo else (config.approval_mode or settings.approval_mode)
    max_steps = config.max_steps if config.max_steps is not None else settings.max_steps_per_turn
    log = EventLog(session.events_path)
    if not records:
        LogJournal(log).write(
            SessionMeta(
                session_id=session.session_id,
                workspace=str(config.workspace),
                provider=resolved.provider_kind,
                model=resolved.model,
                api_host=api_host(resolved.base_url),
                approval_mode=mode,
            )
        )
    instructions, skills = await asyncio.to_thread(
        lambda: (
            load_instructions(config.workspace),
            load_skills(config.workspace, SkillTrust(config.workspace, trust_all=config.yolo)),
        )
    )
    skipped = pending(setup.items())  # what the person did not trust (or was not asked about)
    return await build_loop(
        provider=provider,
        info=LoopInfo(
            provider=resolved.provider_kind,
            model=resolved.model,
            context_window=resolved.context_window,
            approval_mode=mode,
            session_id=session.session_id,
            workspace=str(config.workspace),
            demo=resolved.demo,
            # No sandbox where one was asked for: said once, at start-up (and in /status).
            notices=(
                *opened.notices,
                *rules[0].problems,
                *setup.hooks.problems,
                *([skipped_notice(skipped, headless=not config.interactive)] if skipped else []),
                *skill_notices(skills),
                *([sandbox.summary()] if sandbox.unavailable else []),
            ),
            sandbox=sandbox,
        ),
        workspace=config.workspace,
        spill_dir=session.spill_dir,
        checkpoint_dir=session.checkpoint_dir,
        log=log,
        system_prompt=lambda tools: build_system_prompt(
            config.workspace, instructions, tools, skills=skills.skills
        ),
        history=history,
        transcript=transcript,
        interactive=config.interactive,
        max_output_tokens=resolved.max_output_tokens,
        echo_reasoning=resolved.echo_reasoning,
        options=LoopOptions(
            max_steps=max_steps or 0,
            max_attempts_per_step=settings.max_attempts_per_step,
            retry_budget_s=settings.retry_budget_s,
            max_retry_after_s=settings.max_retry_after_s,
        ),
        mcp_servers=mcp.servers,
        editor_files=config.editor_files,
        editor_terminal=config.editor_terminal,
        mcp_trust=WorkspaceTrust(config.workspace, yolo=config.yolo),
        on_close=(unlock,),
        mcp_problems=mcp.problems,
        rules=rules[0].rules,
        rule_store=rules[1],
        extra_tools=[*web_tools(settings), *skill_tools(skills)],
        metering=metering(config, settings, resolved),
        turn_models=turn_models(
            config, settings, resolved, lambda other: _provider(config, settings, other)
        ),
        user_hooks=UserHooks(setup.hooks.specs, config.workspace),
        trust_asked=config.trust_asked,
        # A resumed session's notes say which sub-folders' memory the model has had.
        result_note=NestedMemory(
            config.workspace, NestedMemory.loaded_in(e.meta.note or "" for e in history)
        ).add_note,
    )


def metering(config: LoopConfig, settings: Config, resolved: ResolvedModel) -> Metering:
    """The model's prices (config.toml's `price_*_per_mtok` over genai-prices' table) and the
    budgets (`--max-budget-usd` over config.toml's `max_budget_usd`)."""
    pricer = model_pricer(settings, resolved)
    budget = Budget(
        max_session_usd=config.max_budget_usd or settings.max_budget_usd,
        max_turn_usd=settings.max_turn_budget_usd,
    )
    return Metering(pricer, budget, others=lambda model: named_pricer(settings, model))


def web_tools(settings: Config) -> list[Tool[Any]]:
    """`web_fetch` behind the address guard; `web_search` when a search service is configured."""
    tools: list[Tool[Any]] = [WebFetch(AddressGuard(allow_private=settings.web.allow_private))]
    if settings.web.search_url:
        tools.append(WebSearch(settings.web.search_url))
    return tools


def skill_tools(skills: SkillSetup) -> list[Tool[Any]]:
    """`skill` when there is a skill to open."""
    return [SkillTool(skills.skills)] if skills.skills else []


def _provider(config: LoopConfig, settings: Config, resolved: ResolvedModel) -> Provider:
    return make_provider(
        ProviderSettings(
            kind=resolved.provider_kind,
            model=resolved.model,
            base_url=resolved.base_url,
            api_key=resolved.api_key,
            echo_reasoning=resolved.echo_reasoning,
            max_tokens=resolved.max_output_tokens,
            prompt_cache=settings.prompt_cache,
            script_path=str(resolved.script) if resolved.script else None,
            workspace=str(config.workspace),
        )
    )


def _open_session(config: LoopConfig) -> _Opened:
    """The session to run (locked), its records and what the user should hear about its log."""
    if config.resume is not None:
        session = Session.open(config.resume)
        if session is None:
            raise LoopSetupError(f"no session {config.resume!r}")
    elif config.continue_latest:
        session = Session.latest_for(config.workspace)
        if session is None:
            raise LoopSetupError(f"no earlier session for {config.workspace} to continue")
    else:
        session = Session.create(config.workspace)
        return _Opened(session, SessionLock.acquire(session.dir), [], ())
    if config.fork:
        session = session.fork()
    try:
        lock = SessionLock.acquire(session.dir)
    except SessionBusyError as exc:
        raise LoopSetupError(
            f"session {session.session_id} is busy: {exc}. Only one process may write a "
            "session. Close it there, or add --fork to continue a copy of it as a new session."
        ) from None
    except OSError as exc:
        raise LoopSetupError(f"cannot lock session {session.session_id}: {exc}") from exc
    try:
        bad_lines: list[int] = []
        records = read_log(session.events_path, bad_lines)
    except EventLogError as exc:
        lock.release()
        raise LoopSetupError(str(exc)) from None
    except BaseException:
        lock.release()
        raise
    notices = (describe_bad_lines(str(session.events_path), bad_lines),) if bad_lines else ()
    return _Opened(session, lock, records, notices)
