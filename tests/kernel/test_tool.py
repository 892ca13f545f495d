"""Tool machine behaviours (docs/loop-spec.md §4): hooks, outcomes, updates, abort by signal."""

from __future__ import annotations

import gc
import weakref

from tests.kernel.fakes import Gate, Rig, ScriptedRunner, calls, ok, prompt, rig, settle, text
from tui_agent.kernel import (
    Deny,
    Proceed,
    ToolHooks,
    ToolOutput,
    ToolRunContext,
    ToolSettled,
    Transitioned,
)
from tui_agent.kernel._statemachine_engine import count_steps, use_engine
from tui_agent.kernel.tool import ToolMachine
from tui_agent.vocab import AbortSignal, ToolCall, ToolResult, ToolUpdate


class Hooks(ToolHooks):
    """Configurable prepare/finish hooks."""

    def __init__(
        self,
        *,
        deny: str = "",
        replace_args: str = "",
        prepare_error: str = "",
        rewrite: str = "",
        finish_error: str = "",
        gate: Gate | None = None,
    ) -> None:
        self.deny, self.replace_args, self.prepare_error = deny, replace_args, prepare_error
        self.rewrite, self.finish_error, self.gate = rewrite, finish_error, gate

    async def prepare(self, call: ToolCall) -> Proceed | Deny:
        if self.gate is not None:
            await self.gate.event.wait()
        if self.prepare_error:
            raise ValueError(self.prepare_error)
        if self.deny:
            return Deny(ToolResult(output=self.deny, is_error=True))
        if self.replace_args:
            return Proceed(call.model_copy(update={"arguments": self.replace_args}))
        return Proceed(call)

    async def finish(self, call: ToolCall, result: ToolResult) -> ToolResult:
        if self.finish_error:
            raise ValueError(self.finish_error)
        if self.rewrite:
            return result.model_copy(update={"output": self.rewrite})
        return result


class AtOnceHooks(ToolHooks):
    """Hooks of the product's kind: they never prepare and finish a result at once, unless
    `later` (then `finish` rewrites it); `at_once_error` raises while finishing at once."""

    prepares = False

    def __init__(self, *, later: bool = False, at_once_error: str = "") -> None:
        self.later, self.at_once_error = later, at_once_error
        self.prepared: list[str] = []

    async def prepare(self, call: ToolCall) -> Proceed | Deny:
        self.prepared.append(call.id)
        return Proceed(call)

    def finish_at_once(self, call: ToolCall, result: ToolResult) -> ToolResult | None:
        if self.at_once_error:
            raise ValueError(self.at_once_error)
        if self.later:
            return None
        return result.model_copy(update={"output": f"{result.output} (at once)"})

    async def finish(self, call: ToolCall, result: ToolResult) -> ToolResult:
        return result.model_copy(update={"output": f"{result.output} (later)"})


def tool_states(r: Rig) -> list[str]:
    """The states the tool machine went through, from its transitions."""
    return [e.target for e in r.of(Transitioned) if e.machine == "tool" and e.target != "live"]


def _echo_args() -> ScriptedRunner:
    async def run(call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        return ToolResult(output=call.arguments)

    return ScriptedRunner(echo=run)


async def test_tool_walks_preparing_executing_finishing_succeeded() -> None:
    r = await rig(
        calls(("c1", "echo")), text("ok"), runner=ScriptedRunner(echo=ok("x")), hooks=Hooks()
    )
    await r.run("hi")
    assert tool_states(r) == ["preparing", "executing", "finishing", "succeeded"]
    [finished] = r.of(ToolSettled)
    assert (finished.call_id, finished.outcome, finished.result.output) == ("c1", "succeeded", "x")


async def test_tool_without_hooks_is_born_executing_and_goes_straight_to_succeeded() -> None:
    r = await rig(calls(("c1", "echo")), text("ok"), runner=ScriptedRunner(echo=ok("x")))
    await r.run("hi")
    assert tool_states(r) == ["executing", "succeeded"]
    starts = [e for e in r.of(Transitioned) if e.machine == "tool" and e.event == "start"]
    assert [(e.source, e.target) for e in starts] == [("", "executing")]
    [finished] = r.of(ToolSettled)
    assert (finished.call_id, finished.outcome, finished.result.output) == ("c1", "succeeded", "x")


async def test_hooks_that_never_prepare_are_born_executing_and_finish_at_once() -> None:
    hooks = AtOnceHooks()
    r = await rig(
        calls(("c1", "echo")), text("ok"), runner=ScriptedRunner(echo=ok("x")), hooks=hooks
    )
    await r.run("hi")
    assert tool_states(r) == ["executing", "succeeded"]
    assert hooks.prepared == []
    assert r.lines()[2] == "tool:x (at once)"


async def test_a_result_not_finished_at_once_goes_through_finishing() -> None:
    hooks = AtOnceHooks(later=True)
    r = await rig(
        calls(("c1", "echo")), text("ok"), runner=ScriptedRunner(echo=ok("x")), hooks=hooks
    )
    await r.run("hi")
    assert tool_states(r) == ["executing", "finishing", "succeeded"]
    assert r.lines()[2] == "tool:x (later)"


async def test_finishing_at_once_that_raises_fails_the_call() -> None:
    hooks = AtOnceHooks(at_once_error="hook broke")
    r = await rig(
        calls(("c1", "echo")), text("ok"), runner=ScriptedRunner(echo=ok("x")), hooks=hooks
    )
    await r.run("hi")
    [finished] = r.of(ToolSettled)
    assert (finished.outcome, finished.result.output) == ("failed", "hook broke")


async def test_a_call_born_executing_with_its_signal_aborted_never_runs() -> None:
    """As it would not have in preparing, where an early abort ended it."""
    runner, signal, errors = ScriptedRunner(echo=ok("x")), AbortSignal(), []
    signal.abort("user_cancelled")
    call = ToolCall(id="c1", name="echo")
    tool = ToolMachine(call, runner, signal, lambda event: None, errors, hooks=AtOnceHooks())
    await tool.activate()
    await tool.settled
    assert (tool.outcome, tool.final_result.output, runner.runs) == ("aborted", "aborted", [])
    assert errors == []


async def test_prepare_hook_may_replace_the_call() -> None:
    hooks = Hooks(replace_args='{"safe": true}')
    r = await rig(calls(("c1", "echo", '{"x": 1}')), text("ok"), runner=_echo_args(), hooks=hooks)
    await r.run("hi")
    assert r.lines()[2] == 'tool:{"safe": true}'


async def test_prepare_hook_may_deny_with_a_result_that_skips_execution() -> None:
    runner = ScriptedRunner(echo=ok("ran"))
    r = await rig(
        calls(("c1", "echo")), text("ok"), runner=runner, hooks=Hooks(deny="denied by user")
    )
    await r.run("hi")
    assert runner.runs == []
    assert r.lines()[2] == "tool:denied by user"
    assert tool_states(r) == ["preparing", "finishing", "succeeded"]


async def test_prepare_hook_error_fails_the_call() -> None:
    r = await rig(
        calls(("c1", "echo")),
        text("ok"),
        runner=ScriptedRunner(echo=ok("x")),
        hooks=Hooks(prepare_error="bad hook"),
    )
    await r.run("hi")
    assert r.lines()[2] == "tool:bad hook"
    assert r.of(ToolSettled)[0].outcome == "failed"


async def test_finish_hook_may_rewrite_the_result() -> None:
    r = await rig(
        calls(("c1", "echo")),
        text("ok"),
        runner=ScriptedRunner(echo=ok("raw")),
        hooks=Hooks(rewrite="rewritten"),
    )
    await r.run("hi")
    assert r.lines()[2] == "tool:rewritten"


async def test_finish_hook_error_fails_the_call() -> None:
    r = await rig(
        calls(("c1", "echo")),
        text("ok"),
        runner=ScriptedRunner(echo=ok("raw")),
        hooks=Hooks(finish_error="finish broke"),
    )
    await r.run("hi")
    assert r.lines()[2] == "tool:finish broke"


async def test_abort_while_preparing_aborts_without_running() -> None:
    gate = Gate()
    runner = ScriptedRunner(echo=ok("x"))
    r = await rig(calls(("c1", "echo")), runner=runner, hooks=Hooks(gate=gate))
    await r.agent.submit(prompt("hi"))
    await settle()
    await r.agent.abort()
    await r.agent.idle()
    assert runner.runs == []
    assert r.lines()[-1] == "tool:aborted"
    assert tool_states(r)[-1] == "aborted"


async def test_runner_error_without_a_message_is_named_by_its_type() -> None:
    async def run(call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        raise KeyError

    r = await rig(calls(("c1", "bad")), text("ok"), runner=ScriptedRunner(bad=run))
    await r.run("hi")
    assert r.lines()[2] == "tool:KeyError"


async def test_runner_returning_nothing_produces_no_result_error() -> None:
    async def run(call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        return None  # type: ignore[return-value]

    r = await rig(calls(("c1", "bad")), text("ok"), runner=ScriptedRunner(bad=run))
    await r.run("hi")
    assert r.lines()[2] == "tool:produced no result"
    assert r.agent.history[2].message.is_error


async def test_tool_updates_are_emitted_while_executing() -> None:
    async def run(call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        ctx.on_update(ToolUpdate(text="50%"))
        ctx.on_update(ToolUpdate(text="100%"))
        return ToolResult(output="done")

    r = await rig(calls(("c1", "work")), text("ok"), runner=ScriptedRunner(work=run))
    await r.run("hi")
    assert [(e.call_id, e.update.text) for e in r.of(ToolOutput)] == [
        ("c1", "50%"),
        ("c1", "100%"),
    ]


async def test_second_detach_is_ignored() -> None:
    async def run(call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        ctx.detach("first")
        ctx.detach("second")
        return ToolResult(output="done")

    r = await rig(calls(("c1", "bg")), text("a"), text("b"), runner=ScriptedRunner(bg=run))
    await r.run("hi")
    await settle()
    await r.agent.idle()
    assert r.lines()[2] == "tool:first"


async def test_tool_note_and_error_flag_reach_the_tool_message() -> None:
    async def run(call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        return ToolResult(output="out", note="for the model", is_error=True)

    r = await rig(calls(("c1", "t")), text("ok"), runner=ScriptedRunner(t=run))
    await r.run("hi")
    tool = r.agent.history[2]
    assert tool.meta.note == "for the model" and tool.message.is_error


async def test_every_machine_reports_its_transitions() -> None:
    r = await rig(calls(("c1", "echo")), text("ok"), runner=ScriptedRunner(echo=ok("x")))
    await r.run("hi")
    machines = {(e.machine, e.machine_id) for e in r.of(Transitioned)}
    assert machines == {("agent", "agent"), ("turn", "turn-0"), ("tool", "c1")}
    turn_targets = [e.target for e in r.of(Transitioned) if e.machine == "turn"]
    # Nothing to drain after the tools: the turn goes straight on to the next request.
    assert turn_targets == ["gating", "streaming", "acting", "streaming", "done"]


async def test_runner_gets_one_batch_with_every_call_of_the_step_before_any_run() -> None:
    order: list[str] = []
    runner = ScriptedRunner(echo=ok("x"))
    original = runner.begin_batch

    def begin(calls_: object, signal: object) -> None:
        order.append("batch")
        original(calls_, signal)  # type: ignore[arg-type]

    async def run(call: ToolCall, ctx: ToolRunContext) -> ToolResult:
        order.append(call.id)
        return ToolResult(output="x")

    runner.begin_batch = begin  # type: ignore[method-assign]
    runner.behaviours["echo"] = run
    r = await rig(calls(("a", "echo"), ("b", "echo")), text("ok"), runner=runner)
    await r.run("hi")
    assert order == ["batch", "a", "b"] and runner.batches == [("a", "b")]


async def test_a_failing_batch_announcement_is_recorded_and_each_call_still_runs() -> None:
    from tests.kernel.fakes import ScriptedRequester, line
    from tui_agent.kernel import Agent

    class BrokenBatch(ScriptedRunner):
        def begin_batch(self, calls: object, signal: AbortSignal) -> None:
            raise RuntimeError("scheduler down")

    requester = ScriptedRequester(calls(("a", "echo")), text("ok"))
    agent = Agent(requester, BrokenBatch(echo=ok("ran")), lambda event: None)
    await agent.start()
    await agent.submit(prompt("hi"))
    await agent.idle()
    assert [line(e) for e in agent.history][2] == "tool:ran"
    assert [str(e) for e in agent.errors] == ["scheduler down"]


async def test_a_reused_tool_machine_frees_its_previous_life_without_the_collector() -> None:
    """Reuse lets go of the previous life's run: nothing may keep it in a reference cycle, or
    every call would leave its invocation, queues and locks to the garbage collector. The
    kernel's engine is renewed, so the previous life's invoke manager is what goes. (Our
    engine's doing: the library's stock engine keeps that cycle.)"""
    errors: list[BaseException] = []
    call = ToolCall(id="c1", name="echo")
    with use_engine("kernel"):
        tool = ToolMachine(
            call, ScriptedRunner(echo=ok("x")), AbortSignal(), lambda _: None, errors
        )
    await tool.activate()
    await tool.settled
    reuse_frees(tool, call, tool._engine._invoke_manager)
    await tool.activate()
    assert (await tool.settled).final_result.output == "x"
    assert errors == []


async def test_a_replaced_engine_is_freed_without_the_collector() -> None:
    """An engine that is replaced rather than renewed (here a counting one) is freed at once."""
    errors: list[BaseException] = []
    call = ToolCall(id="c1", name="echo")
    with count_steps():
        tool = ToolMachine(
            call, ScriptedRunner(echo=ok("x")), AbortSignal(), lambda _: None, errors
        )
        await tool.activate()
        await tool.settled
        reuse_frees(tool, call, tool._engine)
        await tool.activate()
    assert (await tool.settled).final_result.output == "x"
    assert errors == []


def reuse_frees(tool: ToolMachine, call: ToolCall, leftover: object) -> None:
    """Reusing `tool` for another call frees `leftover` at once, without the cyclic collector."""
    previous = weakref.ref(leftover)
    del leftover
    gc.disable()
    try:
        tool.reuse(call.model_copy(update={"id": "c2"}), AbortSignal())
        assert previous() is None
    finally:
        gc.enable()
