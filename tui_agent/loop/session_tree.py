"""The session tree: the turns of a log as branches.

Nothing in a log is ever deleted, so the turns a `rewind` left behind, and those of every
branch the person forked, are all still there: each turn grew from the turn the conversation
was on when it began (`context.Branches` follows that). `SessionTree.of(records)` reads the
tree back with what each turn did (its prompt, when it began, the files it changed, its
tokens) and numbers the branches: branch 1 follows the first turn that grew from each turn,
and every later turn that grew from the same place starts a branch of its own, numbered in
the order they began (so numbers never change as a session grows). Moving between branches is
`loop.branches`'.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import field
from functools import partial

from tui_agent.context import (
    RESTORE_CALL,
    Branches,
    BranchSwitch,
    FileCheckpoint,
    Prompt,
    Record,
    Rewind,
    StepEnd,
    TurnBegin,
    UsageAdded,
)
from tui_agent.lazy_dataclass import dataclass
from tui_agent.usage import Pricer
from tui_agent.vocab import PromptDraft, TokenUsage


@dataclass
class TurnNode:
    """One turn of the tree; `cost_usd` is filled in by whoever knows the prices."""

    number: int
    parent: int | None
    started: float  # unix seconds
    prompt: str = ""
    draft: PromptDraft | None = None
    files: set[str] = field(default_factory=set)  # changed by its tool calls
    usage: TokenUsage = field(default_factory=TokenUsage)
    # Each step's (and finished sub-agent's) tokens, with the model that served them when it
    # was not the session's: each is priced on its own.
    spent: list[tuple[str | None, TokenUsage]] = field(default_factory=list)
    cost_usd: float | None = 0.0


@dataclass
class SessionTree:
    nodes: list[TurnNode] = field(default_factory=list)  # by turn number
    tip: int | None = None  # the turn the conversation is on
    left_at: dict[int, int] = field(default_factory=dict)  # turn -> log position last left

    @classmethod
    def of(cls, records: Sequence[Record]) -> SessionTree:
        tree = cls()
        branches: Branches[int] = Branches()
        for at, record in enumerate(records):
            match record:
                case TurnBegin():
                    parent = branches.tip
                    tree.nodes.append(TurnNode(branches.begin(at), parent, record.ts))
                case Prompt() if tree.nodes and not tree.nodes[-1].prompt:
                    tree.nodes[-1].prompt = record.message.text
                    tree.nodes[-1].draft = record.draft
                case FileCheckpoint() if tree.nodes and record.call_id != RESTORE_CALL:
                    tree.nodes[-1].files.add(record.path)
                case StepEnd(usage=usage, model=model) | UsageAdded(usage=usage, model=model) if (
                    tree.nodes and usage
                ):
                    tree.nodes[-1].usage = tree.nodes[-1].usage + usage
                    tree.nodes[-1].spent.append((model, usage))
                case Rewind():
                    branches.rewind(record.turn, partial(int, at))
                case BranchSwitch():
                    branches.switch(record.turn, partial(int, at))
                case _:
                    pass
        tree.tip = branches.tip
        tree.left_at = {turn: at for turn, at in branches.ends().items() if turn is not None}
        return tree

    def price(self, pricer_for: Callable[[str | None], Pricer]) -> SessionTree:
        """Each turn's cost: its steps', each priced by the model that served it."""
        for node in self.nodes:
            costs = [pricer_for(model).cost(usage) for model, usage in node.spent]
            node.cost_usd = None if None in costs else sum(c for c in costs if c is not None)
        return self

    def children(self, turn: int | None) -> list[int]:
        return [node.number for node in self.nodes if node.parent == turn]

    def path(self, turn: int | None) -> list[int]:
        """The turns from the first to `turn`, oldest first."""
        found: list[int] = []
        while turn is not None:
            found.append(turn)
            turn = self.nodes[turn].parent
        return found[::-1]

    def branches(self) -> list[int]:
        """The first turn of each branch, in branch-number order (branch 1 first)."""
        return [node.number for node in self.nodes if self._starts_branch(node)]

    def branch_of(self, turn: int) -> int:
        """The number (from 1) of the branch `turn` lies on."""
        while not self._starts_branch(self.nodes[turn]):
            parent = self.nodes[turn].parent
            assert parent is not None  # the first root turn starts branch 1
            turn = parent
        return self.branches().index(turn) + 1

    def leaf(self, branch: int) -> int:
        """The last turn of branch number `branch`; `ValueError` when there is none."""
        starts = self.branches()
        if not 1 <= branch <= len(starts):
            raise ValueError(f"no branch {branch}: this session has {len(starts)}")
        turn = starts[branch - 1]
        while kids := self.children(turn):
            turn = kids[0]
        return turn

    def totals(self, turn: int) -> tuple[set[str], float | None, int]:
        """The files changed, the cost and the tokens along the path to `turn`."""
        files: set[str] = set()
        cost: float | None = 0.0
        tokens = 0
        for number in self.path(turn):
            node = self.nodes[number]
            files |= node.files
            cost = None if cost is None or node.cost_usd is None else cost + node.cost_usd
            tokens += node.usage.total
        return files, cost, tokens

    def _starts_branch(self, node: TurnNode) -> bool:
        return node.parent is None or self.children(node.parent)[0] != node.number


__all__ = ["SessionTree", "TurnNode"]
