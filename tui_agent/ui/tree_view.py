"""/tree and /fork: the session's branches as a tree, and moving the conversation between them.

`TreeDialog` draws every turn of the session (`session.turn_label`: the prompt as typed, when
it began, the files it changed, its cost; branch names and totals; the current turn marked),
with the cursor on the current turn; Enter picks a turn and the checkbox (or `f`) says whether
the workspace files move too. It returns `(turn, files)`, or None when the person backs out.

`/tree` moves to the end of the picked turn; `/fork` (and `f` in the /rewind list) moves to
the end of an earlier prompt of this branch, so that the next prompt starts a new branch and
the one left stays in the tree. Before files move, a dialog lists them; a file changed outside
the agent is never overwritten (only the conversation may move then), and a switch the
checkpoints refuse says why and moves nothing. Either way the session is reopened on its new
branch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Checkbox, Static, Tree
from textual.widgets.tree import TreeNode

from tui_agent.loop.api import RestorePlan
from tui_agent.loop.session_tree import SessionTree
from tui_agent.session import grow, turn_label
from tui_agent.ui.rewind_screen import (
    BOTH,
    CONVERSATION,
    RestoreChoice,
    RewindPicker,
    _first_line,
    typed_prompt,
)
from tui_agent.ui.slash_commands import _ask, _reopen, _unavailable

if TYPE_CHECKING:
    from tui_agent.ui.app import TuiAgentApp

FILES_LABEL = "Also put the workspace files back as they were there (f)"


class TreeDialog(ModalScreen[tuple[int, bool] | None]):
    DEFAULT_CSS = """
    TreeDialog { align: center middle; }
    TreeDialog Tree { height: auto; max-height: 24; margin: 1 0 0 0; }
    TreeDialog Checkbox { margin: 1 0 0 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("f", "toggle_files", "Files too"),
    ]

    def __init__(self, tree: SessionTree) -> None:
        super().__init__(id="tree")
        self.session_tree = tree
        self._current: TreeNode[int] | None = None  # the turn the conversation is on

    def compose(self) -> ComposeResult:
        with Vertical(id="rewind-box"):
            yield Static(
                "Session tree: Enter moves to the end of a turn, Esc closes", classes="title"
            )
            yield self._tree_view()
            yield Checkbox(FILES_LABEL, id="tree-files")
            yield Static(
                "Nothing is deleted: the branch you leave stays here. "
                "Your next prompt after an earlier turn starts a new branch.",
                classes="hint",
            )

    def _tree_view(self) -> Tree[int]:
        tree = self.session_tree
        shown: Tree[int] = Tree("session", id="tree-view")
        shown.show_root = False
        shown.auto_expand = False
        nodes: dict[int | None, TreeNode[int]] = {}

        def add(parent: TreeNode[int], turn: int) -> TreeNode[int]:
            label = turn_label(tree, turn)
            if tree.children(turn):
                nodes[turn] = parent.add(label, data=turn, expand=True)
            else:
                nodes[turn] = parent.add_leaf(label, data=turn)
            return nodes[turn]

        grow(tree, shown.root, add)
        shown.root.expand()
        self._current = nodes.get(tree.tip)
        return shown

    def on_mount(self) -> None:
        shown = self.query_one("#tree-view", Tree)
        shown.focus()
        if self._current is not None:
            shown.move_cursor(self._current)

    def on_tree_node_selected(self, event: Tree.NodeSelected[int]) -> None:
        if event.node.data is not None:
            self.dismiss((event.node.data, self.query_one("#tree-files", Checkbox).value))

    def action_toggle_files(self) -> None:
        self.query_one("#tree-files", Checkbox).toggle()

    def action_close(self) -> None:
        self.dismiss(None)


# ------------------------------------------------------------ the commands


def tree_command(app: TuiAgentApp, arg: str) -> None:
    app._call(_tree(app), "/tree")


def fork_command(app: TuiAgentApp, arg: str) -> None:
    app._call(_fork(app), "/fork")


async def _tree(app: TuiAgentApp) -> None:
    if not _ready(app, "tree"):
        return
    tree = await app.loop.session_tree()
    if not tree.nodes:
        app.vm.add_marker("info", "no branches yet: the tree starts with your first prompt")
        return
    picked = await _ask(app, TreeDialog(tree))
    if picked is None:
        return
    turn, files = picked
    if files:  # say which files change, and why some cannot, before anything moves
        plan = await app.loop.switch_plan(turn)
        if plan.files:
            title = f"Switch to: {_first_line(typed_prompt(plan).text)}"
            choice = await _ask(app, _choice(title, plan, "Switch"))
            if choice is None:
                return
            files = choice == BOTH
    await _switch(app, turn, files, f"now on branch {tree.branch_of(turn)}")


async def _fork(app: TuiAgentApp) -> None:
    if not _ready(app, "fork"):
        return
    plans = await app.loop.rewind_plans()
    if not plans:
        app.vm.add_marker("info", "nothing to fork from: no prompts yet")
        return
    picked = await _ask(app, RewindPicker(plans, fork=True))
    if picked is not None:
        await fork_at(app, picked[1])


async def fork_at(app: TuiAgentApp, plan: RestorePlan) -> None:
    """Fork after the prompt of `plan` (its turn stays; what followed becomes a branch of its
    own), asking first whether the files go back too."""
    switch = await app.loop.switch_plan(plan.turn)
    prompt = _first_line(typed_prompt(plan).text)
    choice = await _ask(app, _choice(f"Fork after: {prompt}", switch, "Fork here"))
    if choice is not None:
        await _switch(app, plan.turn, choice == BOTH, f"forked after: {prompt}")


def _choice(title: str, plan: RestorePlan, verb: str) -> RestoreChoice:
    """Files too, or the conversation only: a switch never overwrites what someone else
    changed, so then only the conversation may move."""
    options = [(CONVERSATION, f"{verb}, keep the files as they are")]
    if plan.files and not plan.changed_outside:
        options.insert(0, (BOTH, f"{verb}, and put the files back as they were there"))
    outside = "A switch never overwrites them: the files stay as they are."
    return RestoreChoice(title, plan, options, outside=outside)


def _ready(app: TuiAgentApp, name: str) -> bool:
    if app.vm.busy:
        app.vm.add_marker("warning", f"/{name} waits until the turn has ended (Esc cancels it)")
        return False
    if app.hooks.resume is None:
        _unavailable(app, name)
        return False
    return True


async def _switch(app: TuiAgentApp, turn: int, files: bool, said: str) -> None:
    """A refusal fails the command with the checkpoints' reason (`TuiAgentApp._call`)."""
    resume = app.hooks.resume
    assert resume is not None  # `_ready` said so
    await app.loop.switch_branch(turn, files=files)
    await _reopen(app, resume)  # the reopened session shows the branch
    app.vm.add_marker("info", f"{said}; your next prompt continues from there (/tree)")
    app.prompt_input.focus()
