"""What a session's requests cost, and the budgets that stop it before the next request.

`Metering` is shared by a loop and its sub-agents: the `Pricer` of the model they all use and
the `Budget` (the session's spend, every loop's steps added as they finish, and the limits).
Each loop keeps a `CostLedger`: its session total (its own steps and its sub-agents'), the
running or last turn, each sub-agent and each tool call. A tool call's cost is an estimate:
the tokens its result added to the next request (counted like the rest of the loop counts
text, four characters a token), priced once as fresh input. The `/cost` view reads a
`CostReport`; jsonl readers get `cost_usd` on `usage` and `turn.finished` events.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import field

from tui_agent.context import message_tokens
from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop import events as ev
from tui_agent.usage import Pricer, usd
from tui_agent.vocab import Message, TextPart, TokenUsage, ToolResult

WARN_AT = 0.8  # of a budget: the person hears once that it is nearly spent
TOP_TOOLS = 5  # the dearest tool calls `/cost` lists


@dataclass(frozen=True)
class CostLine:
    """Tokens and their price; `cost_usd` is None when the model has no price."""

    label: str
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float | None = 0.0

    def plus(self, usage: TokenUsage, cost: float | None) -> CostLine:
        total = None if self.cost_usd is None or cost is None else self.cost_usd + cost
        return CostLine(self.label, self.usage + usage, total)


@dataclass(frozen=True)
class ToolCost:
    call_id: str
    name: str
    tokens: int  # estimated: the result's size as it entered the history
    cost_usd: float | None


@dataclass(frozen=True)
class CostReport:
    """What `/cost` shows."""

    model: str
    price_source: str  # "genai-prices 0.2.3", "config.toml", "price unknown"
    session: CostLine
    turn: CostLine | None  # the running turn, else the last one
    subagents: tuple[CostLine, ...]
    tools: tuple[ToolCost, ...]  # the dearest calls, dearest first
    max_budget_usd: float | None
    max_turn_budget_usd: float | None


@dataclass
class Budget:
    """The session's spend against its limits, shared by a loop and its sub-agents."""

    max_session_usd: float | None = None
    max_turn_usd: float | None = None
    spent: float = 0.0
    turn_start: float = 0.0  # `spent` when the running top-level turn began
    _warned: set[str] = field(default_factory=set)

    @property
    def turn_spent(self) -> float:
        return self.spent - self.turn_start

    def begin_turn(self) -> None:
        self.turn_start = self.spent
        self._warned.discard("turn")

    def exceeded(self) -> str | None:
        """Why the next request must not go out, or None."""
        if self.max_session_usd is not None and self.spent >= self.max_session_usd:
            return (
                f"The session spent {usd(self.spent)} of its {usd(self.max_session_usd)} "
                "budget (max_budget_usd, --max-budget-usd); no further request was sent."
            )
        if self.max_turn_usd is not None and self.turn_spent >= self.max_turn_usd:
            return (
                f"This turn spent {usd(self.turn_spent)} of its {usd(self.max_turn_usd)} "
                "budget (max_turn_budget_usd); no further request was sent."
            )
        return None

    def warnings(self) -> list[str]:
        """Budgets that just passed 80 %: each said once (a turn's once per turn); one already
        spent is not warned of (the step gate's stop says it)."""
        said: list[str] = []
        for key, spent, limit, what in (
            ("session", self.spent, self.max_session_usd, "the session's budget"),
            ("turn", self.turn_spent, self.max_turn_usd, "this turn's budget"),
        ):
            if limit is None or key in self._warned or spent >= limit:
                continue
            if spent >= WARN_AT * limit:
                self._warned.add(key)
                said.append(f"{usd(spent)} spent: {spent / limit:.0%} of {what} ({usd(limit)}).")
        return said


@dataclass(frozen=True)
class Metering:
    pricer: Pricer  # the session's model's
    budget: Budget
    # The pricer of another model a logged step names (a turn a custom command ran on it);
    # None: such a step is priced by its name alone.
    others: Callable[[str], Pricer] | None = None
    _seen: dict[str, Pricer] = field(default_factory=dict, compare=False, repr=False)

    def pricer_for(self, model: str | None) -> Pricer:
        """The pricer of the step's model (None: the session's)."""
        if model is None or model == self.pricer.model:
            return self.pricer
        if model not in self._seen:
            other = self.others(model) if self.others is not None else None
            self._seen[model] = other or Pricer(model, provider="")
        return self._seen[model]

    @property
    def limited(self) -> bool:
        return self.budget.max_session_usd is not None or self.budget.max_turn_usd is not None


class CostLedger:
    """One loop's costs (see the module docstring)."""

    def __init__(
        self,
        metering: Metering,
        session: CostLine,
        *,
        top_level: bool = True,
        pricing: Callable[[Pricer], Pricer] = lambda session: session,
    ) -> None:
        self.metering = metering
        # The pricer of the model serving requests now (a turn may run on another model).
        self._pricing = pricing
        self.session = session
        self._top_level = top_level  # a sub-agent's turns run inside its parent's turn
        self.turn: CostLine | None = None
        self._subagents: dict[str, CostLine] = {}
        self._tools: list[ToolCost] = []
        self._unpriced_said = False

    def begin_turn(self, turn_id: int) -> None:
        self.turn = CostLine(f"turn {turn_id}")
        if self._top_level:
            self.metering.budget.begin_turn()

    def step(self, usage: TokenUsage) -> float | None:
        """One request's usage: priced, added here and to the shared spend."""
        cost = self.pricer.cost(usage)
        self._add(usage, cost)
        if cost is not None:
            self.metering.budget.spent += cost
        return cost

    def budget_check(self) -> tuple[str | None, str | None]:
        """Before a request: why it must not be sent (a budget is spent), and a warning to show
        once when a budget is set but the model has no price (the request then goes)."""
        metering, pricer = self.metering, self.pricer
        if not metering.limited:
            return None, None
        if not pricer.known:
            if self._unpriced_said:
                return None, None
            self._unpriced_said = True
            return None, (
                f"No price is known for {pricer.model}: the budget cannot be checked. "
                "Set price_input_per_mtok and price_output_per_mtok under its [models] table in "
                "config.toml."
            )
        return metering.budget.exceeded(), None

    def subagent(
        self, call_id: str, description: str, usage: TokenUsage, cost: float | None
    ) -> None:
        """A finished sub-agent: its steps were already added to the shared spend as they ran."""
        self._subagents[call_id] = CostLine(description or call_id, usage, cost)
        self._add(usage, cost)

    def tool_result(self, call_id: str, name: str, result: ToolResult) -> None:
        output = result.output
        content = (TextPart(text=output),) if isinstance(output, str) else output
        tokens = message_tokens(Message(role="tool", content=content, is_error=result.is_error))
        cost = self.pricer.cost(TokenUsage(input_other=tokens))
        self._tools.append(ToolCost(call_id, name, tokens, cost))

    def report(self) -> CostReport:
        budget = self.metering.budget
        tools = sorted(self._tools, key=lambda tool: tool.tokens, reverse=True)[:TOP_TOOLS]
        return CostReport(
            model=self.pricer.model,
            price_source=self.pricer.source,
            session=self.session,
            turn=self.turn,
            subagents=tuple(self._subagents.values()),
            tools=tuple(tools),
            max_budget_usd=budget.max_session_usd,
            max_turn_budget_usd=budget.max_turn_usd,
        )

    @property
    def pricer(self) -> Pricer:
        return self._pricing(self.metering.pricer)

    def _add(self, usage: TokenUsage, cost: float | None) -> None:
        self.session = self.session.plus(usage, cost)
        if self.turn is not None:
            self.turn = self.turn.plus(usage, cost)


def priced(
    events: Sequence[ev.LoopEvent], pricer_for: Callable[[str | None], Pricer]
) -> tuple[tuple[ev.LoopEvent, ...], CostLine]:
    """A logged session's replayed events with `cost_usd` on each `usage` event, and what the
    session spent: each `usage` event adds one step (or a finished sub-agent) to the total
    before it, and each is priced on its own, by the pricer of the model that served it (the
    event names it when it was not the session's: `Metering.pricer_for`)."""
    line = CostLine("session")
    out: list[ev.LoopEvent] = []
    for event in events:
        if isinstance(event, ev.UsageChanged):
            step = _less(event.total, line.usage)
            if step.total:
                line = line.plus(step, pricer_for(event.model).cost(step))
            event = event.model_copy(update={"cost_usd": line.cost_usd})
        out.append(event)
    return tuple(out), line


def _less(total: TokenUsage, before: TokenUsage) -> TokenUsage:
    return TokenUsage(
        input_other=total.input_other - before.input_other,
        output=total.output - before.output,
        input_cache_read=total.input_cache_read - before.input_cache_read,
        input_cache_creation=total.input_cache_creation - before.input_cache_creation,
    )
