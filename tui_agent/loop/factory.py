"""Wiring a loop from its parts: provider, tools, journal, adapters, kernel, service.

`build_loop` composes named parts, each built after what it needs: the journal over the event
log and the policy that reports to it; the approvals and the MCP servers; the tool registry
(with the loop's own plan tools, and `task`, whose children `_Children` builds by calling
`build_loop` again); the executor; the request builder; the engine (which owns the kernel); the
service, with compaction registered (proactive in the step gate at 85 % of the window, and on
context overflow through the error-handler chain). Then it starts the machines. It must run
inside the event loop that will drive them. `session.open_loop` calls it for the command line.

MCP servers given in `mcp_servers` start in the background once the loop runs; their tools
join the registry as they come up (the model sees them from the next request on). Workspace
servers need approval: `mcp_trust` knows the ones already approved, and an interactive loop
asks the user through the approval queue. Permission `rules` go to the approvals; a project's
allow rules the person has not trusted yet are asked about the same way when one of them would
allow a call, and `rule_store` writes what the person keeps. `exit_plan_mode` is wired to the
approvals here. The person's hook commands (`user_hooks`) go around tool calls and on the slots.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_agent.context import (
    EventLog,
    PrefixWatch,
    SessionMeta,
    project,
)
from tui_agent.lazy_dataclass import dataclass
from tui_agent.llm import Provider
from tui_agent.loop import events as ev
from tui_agent.loop._policy import TurnPolicy
from tui_agent.loop.adapters.engine import Engine
from tui_agent.loop.adapters.requester import LoopRequester
from tui_agent.loop.adapters.tools import LoopToolRunner, ResultNote
from tui_agent.loop.api import LoopApi, LoopInfo
from tui_agent.loop.checkpoints import Checkpoints
from tui_agent.loop.compaction_policy import compact_and_retry, proactive_compaction, summariser
from tui_agent.loop.costs import Budget, CostLedger, CostLine, Metering, priced
from tui_agent.loop.journal import LogJournal
from tui_agent.loop.replay import Replay
from tui_agent.loop.service import (
    AgentLoopService,
    LoopErrorHandler,
    LoopOptions,
    is_context_overflow,
    mcp_server_infos,
)
from tui_agent.loop.subagent import SUBAGENT_PROMPT, Parent, SubagentOptions, Subagents, Task
from tui_agent.loop.turn_model import ModelRouter, TurnModels
from tui_agent.loop.userhooks import ToolHookGate, UserHooks, attach
from tui_agent.tools import (
    PLAN_MODE_PROMPT,
    UNSANDBOXED,
    ApprovalRequest,
    Approvals,
    BatchExecutor,
    EditorFiles,
    EditorTerminal,
    ExitPlanMode,
    Rule,
    RuleStore,
    TodoWrite,
    Tool,
    ToolRegistry,
    ToolScheduler,
    Workspace,
    default_registry,
    plan_in,
)
from tui_agent.usage import Pricer
from tui_agent.vocab import HistoryEntry, LLMRequest, TokenUsage, ToolSpec

if TYPE_CHECKING:  # loaded only when servers are configured: the one-shot path stays light
    from tui_agent.tools.mcp import McpServerConfig, McpServers, TrustAnswer, TrustStore


async def build_loop(
    *,
    provider: Provider,
    info: LoopInfo,
    workspace: Path,
    spill_dir: Path,
    log: EventLog,
    system_prompt: Callable[[tuple[str, ...]], str],
    history: Sequence[HistoryEntry] = (),
    interactive: bool = True,
    max_output_tokens: int | None = None,
    echo_reasoning: bool = False,
    options: LoopOptions = LoopOptions(),
    extra_tools: Sequence[Tool[Any]] = (),
    editor_files: EditorFiles | None = None,
    editor_terminal: EditorTerminal | None = None,
    subagent_options: SubagentOptions = SubagentOptions(),
    depth: int = 0,
    tool_names: Sequence[str] | None = None,
    parent: Parent | None = None,
    approvals: Approvals | None = None,
    owns_provider: bool = True,
    mcp_servers: Sequence[McpServerConfig] = (),
    mcp_trust: TrustStore | None = None,
    mcp_problems: Sequence[str] = (),
    shared_mcp: McpServers | None = None,
    transcript: Replay | None = None,
    checkpoint_dir: Path | None = None,
    checkpoints: Checkpoints | None = None,
    on_close: Sequence[Callable[[], Awaitable[None]]] = (),
    rules: Sequence[Rule] = (),
    rule_store: RuleStore | None = None,
    metering: Metering | None = None,
    user_hooks: UserHooks | None = None,
    trust_asked: bool = False,
    replace_tools: Sequence[Tool[Any]] | None = None,  # a rerun's: built-in and own ones by name
    approvals_type: Callable[..., Approvals] = Approvals,  # a rerun's asks where its log did
    result_note: ResultNote | None = None,
    turn_models: TurnModels | None = None,
    router: ModelRouter | None = None,
) -> AgentLoopService:
    """Wire a service from parts; tests use it with their own provider, paths and tools.

    A sub-agent's loop is built here too (`depth` > 0): it shares the parent's `approvals`
    (mode and rules), provider (`owns_provider=False`), tools and scheduler (`parent`) and
    may be limited to `tool_names`; its writes are checkpointed by the parent's
    `checkpoints`, in the parent's log, inside the parent's turn.
    A resumed session passes its `transcript`; `checkpoint_dir` keeps prior file contents;
    `on_close` runs, in order, after the loop's own parts have closed. `metering` prices the
    steps and holds the budgets (a sub-agent shares its parent's). `trust_asked`: the front end
    asked about the workspace's servers and allow rules at start-up, so nothing asks again.
    `result_note` adds to each tool result before the model sees it (a sub-folder's memory
    files). `turn_models` resolves the model a prompt asks its turn to run on (see
    `loop.turn_model`); a sub-agent shares its parent's `router`, so it runs on the turn's."""
    root = Workspace(workspace, readable=(spill_dir,))
    if checkpoints is None and checkpoint_dir is not None:
        checkpoints = Checkpoints(checkpoint_dir, root, log)
    journal = LogJournal(log)
    metering = metering or Metering(Pricer(info.model, provider=info.provider), Budget())
    router = router or ModelRouter(provider, turn_models)
    provider = router  # every request goes through it, sub-agents' and compaction's too
    shown, spent = await _spent_so_far(metering, transcript, top_level=depth == 0)
    # Built first: the engine reports to it, and the tools below publish through it.
    policy = TurnPolicy(
        journal=journal,
        clock=time.time,
        context_window=info.context_window,
        usage=transcript.usage if transcript is not None else TokenUsage(),
        context_tokens=transcript.context_tokens if transcript is not None else 0,
        ledger=CostLedger(metering, spent, top_level=depth == 0, pricing=router.pricer),
    )
    policy.router, policy.owns_turns = router, depth == 0
    shared_approvals = approvals or approvals_type(
        info.approval_mode,
        rules,
        ask=policy.approvals.ask if interactive else None,
        store=rule_store,
        ask_trust=not trust_asked,
    )
    if depth == 0:  # a sub-agent's turns run inside its parent's: the parent's limit holds
        policy.limit_tools = shared_approvals.limit_turn
    # A sub-agent uses its parent's MCP servers (when its tools are not limited by name).
    mcp = shared_mcp if tool_names is None else None
    owned_mcp = None
    if shared_mcp is None and (mcp_servers or mcp_problems):
        asks = interactive and not trust_asked
        mcp = owned_mcp = _mcp_servers(policy, mcp_servers, mcp_trust, mcp_problems, asks)
    if parent is None:
        # A sub-agent shares its parent's tools, so its commands run in the parent's sandbox.
        sandbox = info.sandbox or UNSANDBOXED
        tools = (*default_registry(root, editor_files, sandbox, editor_terminal), *extra_tools)
        if replace_tools is not None:
            tools = tuple(replace_tools)
        scheduler = ToolScheduler()
    else:
        tools, scheduler = parent.tools, parent.scheduler
    children = None
    if depth < subagent_options.max_depth:
        children = _Children(
            provider=provider,
            info=info,
            workspace=workspace,
            spill_dir=spill_dir,
            system_prompt=system_prompt,
            interactive=interactive,
            max_output_tokens=max_output_tokens,
            echo_reasoning=echo_reasoning,
            options=replace(options, max_steps=subagent_options.max_steps),
            subagent_options=subagent_options,
            depth=depth + 1,
            tools=tools,
            scheduler=scheduler,
            task_call_id=parent.task_call_id if parent else None,
            approvals=shared_approvals,
            mcp=mcp,
            checkpoints=checkpoints,
            metering=metering,
            user_hooks=user_hooks,
            router=router,
        )
    subagents = Subagents(Path(log.path).parent / "tasks")
    registry = _registry(tools, policy, shared_approvals, subagents, children, tool_names, mcp)
    system = system_prompt(registry.names)
    hooks = (user_hooks or UserHooks((), workspace)).bind(
        info.session_id, Path(log.path), lambda: shared_approvals.mode, policy.publish, journal
    )
    executor = BatchExecutor(
        registry,
        root,
        shared_approvals,
        spill_dir,
        abort_grace_s=options.tool_abort_grace_s,
        scheduler=scheduler,
        checkpointer=checkpoints,
        approval_call_id=parent.task_call_id if parent else None,
        report=policy.report_error,
        hooks=ToolHookGate(hooks) if user_hooks and user_hooks.specs else None,
    )
    tool_specs = tuple(registry.specs())  # JSON Schema generation is too dear to repeat per step
    build_request = _request_builder(
        router,
        policy,
        shared_approvals,
        system,
        tool_specs,
        mcp,
        max_output_tokens,
        echo_reasoning,
    )
    runner = LoopToolRunner(executor, result_note)
    engine = Engine(
        requester=LoopRequester(provider, policy.gate, build_request),
        tool_runner=runner,
        journal=journal,
        listener=policy,
        options=replace(options, provider=info.provider, model=info.model),
        history=history,
        clock=time.time,
    )
    policy.attach(engine)
    service = AgentLoopService(
        info=info,
        engine=engine,
        policy=policy,
        journal=journal,
        options=options,
        subagents=subagents,
        compactor=summariser(provider, system, tool_specs, info.context_window),
        # A sub-agent shares its parent's approvals; the parent's service reports mode changes.
        approvals=shared_approvals if approvals is None else None,
        forget_rule=rule_store.forget if rule_store is not None else lambda rule: None,
        on_close=(
            hooks.close,  # before the log closes: the hooks' runs are logged
            _closer(runner, executor, owned_mcp, log, provider if owns_provider else None),
            *on_close,
        ),
        mcp=owned_mcp,
        checkpoints=checkpoints if depth == 0 else None,
        transcript=shown,
        next_request=lambda: build_request(engine.history),
        user_hooks=user_hooks,
    )
    service.register_loop_error_handler(
        LoopErrorHandler("compaction", is_context_overflow, compact_and_retry(service))
    )
    service.on_will_begin_step.register("compaction", proactive_compaction(service, system))
    if mcp is not None:
        from tui_agent.loop.mcp_offers import lists_settled  # only with MCP servers

        service.on_will_begin_step.register("mcp-lists", lists_settled(mcp))
    if plan := plan_in(history):
        service.set_plan(plan)
    attach(service, hooks, subagent=depth > 0, resumed=bool(history))
    await service.start()
    if owned_mcp is not None:
        owned_mcp.start()  # last: its first notices reach whoever subscribes as this returns
    return service


async def _spent_so_far(
    metering: Metering, transcript: Replay | None, *, top_level: bool
) -> tuple[tuple[ev.LoopEvent, ...], CostLine]:
    """A resumed session's events, priced, and what it spent (counted against its budget)."""
    # The price table's import takes half a second: in a thread, off the (UI's) event loop;
    # a new session does not wait for it (its first request needs no price).
    warming = asyncio.get_running_loop().run_in_executor(None, metering.pricer.warm)
    shown = transcript.events if transcript is not None else ()
    if not (shown and top_level):
        return shown, CostLine("session")
    await warming  # the status bar of a reopened session shows its cost at once
    # A day's session has thousands of usage events (a tenth of a second of CPU): off the loop.
    shown, spent = await asyncio.to_thread(priced, shown, metering.pricer_for)
    metering.budget.spent = spent.cost_usd or 0.0
    return shown, spent


@dataclass(frozen=True)
class _Children:
    """What every sub-agent of one loop is built from: its parent loop's provider, paths,
    approvals, MCP servers, checkpoints, tool instances and scheduler, one level deeper."""

    provider: Provider
    info: LoopInfo
    workspace: Path
    spill_dir: Path
    system_prompt: Callable[[tuple[str, ...]], str]
    interactive: bool
    max_output_tokens: int | None
    echo_reasoning: bool
    options: LoopOptions  # with the sub-agents' step limit
    subagent_options: SubagentOptions
    depth: int  # the children's
    tools: tuple[Tool[Any], ...]
    scheduler: ToolScheduler
    task_call_id: str | None  # a top-level `task` call's id, when this loop is itself a child
    approvals: Approvals
    mcp: McpServers | None
    checkpoints: Checkpoints | None
    metering: Metering  # prices and budgets: a sub-agent spends from its parent's
    user_hooks: UserHooks | None
    router: ModelRouter  # the parent's: a sub-agent runs on its turn's model

    async def spawn(self, call_id: str, names: Sequence[str] | None, path: Path) -> LoopApi:
        info, workspace, system_prompt = self.info, self.workspace, self.system_prompt
        child_log = EventLog(path)
        child_info = replace(info, session_id=f"{info.session_id}/{call_id}")
        LogJournal(child_log).write(
            SessionMeta(
                session_id=child_info.session_id,
                workspace=str(workspace),
                provider=info.provider,
                model=info.model,
                approval_mode=info.approval_mode,
            )
        )
        return await build_loop(
            provider=self.provider,
            info=child_info,
            workspace=workspace,
            spill_dir=self.spill_dir,
            log=child_log,
            system_prompt=lambda tools: f"{system_prompt(tools)}\n\n{SUBAGENT_PROMPT}",
            interactive=self.interactive,
            max_output_tokens=self.max_output_tokens,
            echo_reasoning=self.echo_reasoning,
            options=self.options,
            subagent_options=self.subagent_options,
            depth=self.depth,
            tool_names=names,
            parent=Parent(self.tools, self.scheduler, self.task_call_id or call_id),
            approvals=self.approvals,
            owns_provider=False,
            shared_mcp=self.mcp,
            checkpoints=self.checkpoints,
            metering=self.metering,
            user_hooks=self.user_hooks,
            router=self.router,
        )


def _registry(
    tools: Sequence[Tool[Any]],
    policy: TurnPolicy,
    approvals: Approvals,
    subagents: Subagents,
    children: _Children | None,
    tool_names: Sequence[str] | None,
    mcp: McpServers | None,
) -> ToolRegistry:
    """The shared tools, the loop's own plan tools and `task` (below the depth limit), limited
    to `tool_names` when given, with the MCP servers' tools as a source."""
    registry = ToolRegistry(tools)

    async def present_plan(plan: str, call_id: str) -> str:
        policy.publish(ev.PlanProposed(call_id=call_id, plan=plan))
        return await approvals.present_plan(plan, call_id)

    for own in (TodoWrite(policy.set_plan), ExitPlanMode(present_plan)):  # or a rerun's
        if own.name not in registry:
            registry.register(own)
    if children is not None and "task" not in registry:
        registry.register(
            Task(subagents, children.spawn, policy.subagent_usage, policy.publish, registry.names)
        )
    if tool_names is not None:
        registry = ToolRegistry(tool for tool in registry if tool.name in tool_names)
    if mcp is not None:
        registry.add_source(mcp)
    return registry


def _request_builder(
    provider: ModelRouter,
    policy: TurnPolicy,
    approvals: Approvals,
    system: str,
    tool_specs: tuple[ToolSpec, ...],
    mcp: McpServers | None,
    max_tokens: int | None,
    echo_reasoning: bool,
) -> Callable[[Sequence[HistoryEntry]], LLMRequest]:
    prefix = PrefixWatch()

    def build_request(history: Sequence[HistoryEntry]) -> LLMRequest:
        # In plan mode the model hears so from its first request, not from a refused edit.
        planning = approvals.mode == "plan"
        said = (system, PLAN_MODE_PROMPT if planning else "", mcp.instructions() if mcp else "")
        request = LLMRequest(
            model=provider.model,
            system="\n\n".join(part for part in said if part),
            messages=tuple(project(policy.view(history))),
            tools=tool_specs + mcp.specs() if mcp else tool_specs,
            max_tokens=provider.max_tokens(max_tokens),
            echo_reasoning=provider.echo_reasoning(echo_reasoning),
        )
        prefix.see(request)  # logs where a provider's prompt cache will miss, and why
        return request

    return build_request


def _mcp_servers(
    policy: TurnPolicy,
    configs: Sequence[McpServerConfig],
    trust: TrustStore | None,
    problems: Sequence[str],
    interactive: bool,
) -> McpServers:
    from tui_agent.tools.mcp import McpServers

    async def ask_trust(servers: Sequence[McpServerConfig]) -> TrustAnswer:
        decision = await policy.approvals.ask(
            ApprovalRequest.trust(
                "MCP servers from .mcp.json",
                f"Start the {len(servers)} MCP server(s) this workspace's .mcp.json configures?",
                "\n".join(server.describe() for server in servers),
            )
        )
        return decision.kind

    servers = McpServers(
        configs,
        trust=trust,
        ask_trust=ask_trust if interactive else None,
        problems=problems,
        on_change=lambda: policy.publish(ev.McpServersChanged(servers=mcp_server_infos(servers))),
        on_notice=lambda level, text: policy.publish(ev.Notice(level=level, text=text)),
    )
    return servers


def _closer(
    runner: LoopToolRunner,
    executor: BatchExecutor,
    owned_mcp: McpServers | None,
    log: EventLog,
    owned_provider: Provider | None,
) -> Callable[[], Awaitable[None]]:
    """Closes the loop's own parts, in order (what it shares with its parent stays open)."""

    async def close() -> None:
        await runner.aclose()
        await executor.aclose()  # ends background shells
        if owned_mcp is not None:
            await owned_mcp.aclose()
        await log.close()
        if owned_provider is not None:
            await owned_provider.aclose()

    return close
