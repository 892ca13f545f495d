"""Moving the conversation between the branches of the session tree (`loop.session_tree`).

`switch_plan` and `switch_branch` move the conversation to the end of any turn and, when the
person asks, the workspace files too: each file the agent ever changed gets the content it had
when the conversation last left that turn, which the checkpoints hold (a write keeps what it
overwrites, and so does a restore). A file changed outside the agent since it last wrote it,
or whose content then was never kept, refuses the switch: nothing is written.
"""

from __future__ import annotations

from tui_agent.context import BranchSwitch, FileCheckpoint
from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop.api import RestorePlan
from tui_agent.loop.checkpoints import Checkpoints, RestoreRefused, Timeline
from tui_agent.loop.session_tree import SessionTree
from tui_agent.tools import WorkspaceError


def _state_at(
    checkpoints: list[tuple[int, FileCheckpoint]], position: int
) -> tuple[str | None, int | None]:
    """A file's digest and permission bits at log `position`, from its checkpoints (position,
    record), in order: what the last write before it left, else what the first one after it
    found. A tool's write keeps the bits it found, so that record gives them either way."""
    before = [checkpoint for at, checkpoint in checkpoints if at < position]
    if before:
        return before[-1].after, before[-1].mode
    return checkpoints[0][1].before, checkpoints[0][1].mode


@dataclass(frozen=True)
class _Switch:
    plan: RestorePlan
    targets: tuple[FileCheckpoint, ...]  # `before` is the content each file gets
    refusals: tuple[str, ...]


async def _switch(checkpoints: Checkpoints, turn: int) -> _Switch:
    records = await checkpoints.records()
    tree, timeline = SessionTree.of(records), Timeline.of(records)
    if not 0 <= turn < len(tree.nodes):
        raise ValueError(f"no turn {turn} in this session")
    position = len(records) if turn == tree.tip else tree.left_at[turn]
    by_file: dict[str, list[tuple[int, FileCheckpoint]]] = {}
    for at, _, checkpoint in timeline.checkpoints:
        by_file.setdefault(checkpoint.path, []).append((at, checkpoint))
    files, outside, refusals, targets = [], [], [], []
    for path, kept in by_file.items():
        wanted, mode = _state_at(kept, position)
        try:
            current = await checkpoints.digest(path)
        except WorkspaceError as error:
            files.append(path)
            refusals.append(f"{path}: {error}")
            continue
        if current == wanted:
            continue
        files.append(path)
        if current != kept[-1][1].after:
            outside.append(path)
            refusals.append(f"{path} was changed outside the agent since it last wrote it")
        elif wanted is not None and not checkpoints.kept(wanted):
            refusals.append(f"{path}: its content on that branch was not kept")
        targets.append(FileCheckpoint(call_id="", path=path, before=wanted, after=None, mode=mode))
    left = set(tree.path(tree.tip)) - set(tree.path(turn))  # the turns of the branch left
    shell = tuple(command for number, command in timeline.shell if number in left)
    node = tree.nodes[turn]
    plan = RestorePlan(turn, node.prompt, node.draft, tuple(files), shell, tuple(outside))
    return _Switch(plan, tuple(targets), tuple(refusals))


async def switch_plan(checkpoints: Checkpoints, turn: int) -> RestorePlan:
    """What moving to the end of turn `turn` would do: the files whose content would change
    (and of those, the ones changed outside the agent), the shell calls of the branch left."""
    return (await _switch(checkpoints, turn)).plan


async def switch_branch(checkpoints: Checkpoints, turn: int, *, files: bool) -> BranchSwitch:
    """Move the conversation to the end of turn `turn` and, with `files`, the workspace files
    too; `RestoreRefused` (nothing moved) when a file may not be put back."""
    found = await _switch(checkpoints, turn)
    if not (files and found.targets):
        switched = BranchSwitch(turn=turn)
        await checkpoints.record(switched)
        return switched
    if found.refusals:
        raise RestoreRefused("nothing was switched: " + "; ".join(found.refusals))
    # Logged before the files are written: the restores' checkpoints then belong to the
    # branch switched to, and the branch left keeps the files it had.
    switched = BranchSwitch(turn=turn, paths=tuple(target.path for target in found.targets))
    await checkpoints.put_back(found.targets, opening=switched)
    await checkpoints.log.drain()
    return switched


__all__ = ["switch_branch", "switch_plan"]
