"""The session tree of a logged session, as people read it: in `tui-agent sessions --tree`, in
the app's /tree dialog and for `tui-agent export --branch N`.

`logged_tree` reads the tree from a log and prices each turn for the session's model;
`turn_label` is the one line a turn shows (its prompt as typed, when it began, the files it
changed, its cost; a branch's first turn names the branch, its last turn the branch's totals;
the turn the conversation is on is marked); `grow` lays the tree out in any widget, and
`text_tree` is it for a terminal (`print_tree` prints a session's). `on_branch` is a log as
if the conversation were on another branch, which is what an export of that branch replays.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from rich.console import Console
from rich.text import Text
from rich.tree import Tree

from tui_agent.context import BranchSwitch, EventLogError, Record, read_log
from tui_agent.loop.session_tree import SessionTree
from tui_agent.session._attachments import split_attachments
from tui_agent.session._costs import session_pricers
from tui_agent.usage import usd

H = TypeVar("H")
WIDTH = 44  # of a prompt's first line in a label: a row fits a dialog on 100 columns


def logged_tree(records: Sequence[Record]) -> SessionTree:
    return SessionTree.of(records).price(session_pricers(records))


def on_branch(records: Sequence[Record], branch: int | None) -> list[Record]:
    """`records` as if the conversation had then moved to the end of branch number `branch`
    (None: where it is); `ValueError` names the branches there are."""
    if branch is None:
        return list(records)
    return [*records, BranchSwitch(turn=SessionTree.of(records).leaf(branch))]


def turn_label(tree: SessionTree, turn: int) -> Text:
    node = tree.nodes[turn]
    label = Text()
    starts = tree.branches()
    if turn in starts:
        label.append(f"branch {starts.index(turn) + 1}  ", style="bold")
    typed = node.draft.text if node.draft is not None else split_attachments(node.prompt)[0]
    label.append(f"❯ {_first_line(typed)}")
    if turn == tree.tip:
        label.append(" ◀ current", style="bold reverse")
    facts = [_when(node.started)]
    if node.files:
        facts.append(_files(len(node.files)))
    facts.append(_cost(node.cost_usd, node.usage.total))
    label.append("  " + " · ".join(facts), style="dim")
    if not tree.children(turn):
        files, cost, tokens = tree.totals(turn)
        totals = f"{_files(len(files))}, {_cost(cost, tokens)}"
        label.append(f"  (branch: {totals})", style="dim italic")
    return label


def grow(tree: SessionTree, root: H, add: Callable[[H, int], H]) -> None:
    """Call `add(parent, turn)` for every turn, parents first, children in the order they
    began; `add` returns what the turn's own children hang from."""
    stack = [(root, turn) for turn in reversed(tree.children(None))]
    while stack:
        parent, turn = stack.pop()
        here = add(parent, turn)
        stack.extend((here, child) for child in reversed(tree.children(turn)))


def text_tree(tree: SessionTree, title: str) -> Tree:
    shown = Tree(title)
    grow(tree, shown, lambda parent, turn: parent.add(turn_label(tree, turn)))
    return shown


def print_tree(log: Path, title: str) -> None:
    """`title`, then the tree of the session whose log is `log` beneath it (`sessions --tree`);
    a log that cannot be read says so in its place."""
    try:
        tree = logged_tree(read_log(log))
    except (EventLogError, OSError) as error:
        print(f"{title}\n  (its log cannot be read: {error})")
        return
    # Piped, a row is never cut to a made-up width: it is one line of the file.
    width = None if sys.stdout.isatty() else 10_000
    Console(highlight=False, width=width).print(text_tree(tree, title))


def _when(ts: float) -> str:
    """The time of day for a turn of today, else the day."""
    began = time.localtime(ts)
    return time.strftime("%H:%M" if began[:3] == time.localtime()[:3] else "%d %b", began)


def _cost(cost: float | None, tokens: int) -> str:
    """The price when the model has one, else the tokens (a local or scripted model)."""
    return usd(cost) if cost is not None else f"{tokens:,} tok"


def _files(count: int) -> str:
    return f"{count} file{'s' * (count != 1)}" if count else "no files"


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(empty prompt)"
    return line if len(line) <= WIDTH else line[: WIDTH - 1] + "…"
