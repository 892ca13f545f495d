"""The tool contract: a typed argument model, what a call touches, and how it runs.

A tool subclasses `Tool[ArgsModel]`. The pydantic model's JSON Schema is what the model sees;
`accesses` feeds the scheduler; `check` fails a call that cannot work before anyone approves it;
`approval_rule`, `matches_rule`, `rule_subjects`, `plan_safe`, the sandbox questions, `describe`
and `preview` feed approvals and the UI; `execute` does the work with a `ToolContext` (abort
signal, progress updates, detaching into the background, the workspace and the call id).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from tui_agent.lazy_dataclass import dataclass
from tui_agent.tools._accesses import ToolAccesses
from tui_agent.tools._workspace import Workspace
from tui_agent.vocab import AbortSignal, FileChange, ToolFacts, ToolResult, ToolSpec, ToolUpdate

ArgsT = TypeVar("ArgsT", bound=BaseModel)


class ToolArgs(BaseModel):
    """Base for argument models: unknown fields are an error the model can read and fix."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class ToolAborted(Exception):
    """Raised by a tool that stopped because its signal aborted; `partial` is what it had."""

    def __init__(self, partial: str = "") -> None:
        super().__init__("aborted")
        self.partial = partial


@dataclass(frozen=True)
class ToolContext:
    signal: AbortSignal
    on_update: Callable[[ToolUpdate], None]
    detach: Callable[[str], None]
    workspace: Workspace
    call_id: str
    spill_dir: Path | None = None  # where a tool may stream an output too big to hold


class Tool(ABC, Generic[ArgsT]):
    name: ClassVar[str]
    description: ClassVar[str]
    Args: type[ArgsT]
    read_only: ClassVar[bool] = False
    edits_files: ClassVar[bool] = False  # allowed without asking in "auto-edit" mode
    facts: ClassVar[ToolFacts] = ToolFacts()  # how front ends and the system prompt present it

    def accesses(self, args: ArgsT) -> ToolAccesses:
        return ToolAccesses.all()

    def approval_rule(self, args: ArgsT) -> str:
        """What "approve always" remembers for this call."""
        return self.name

    def matches_rule(self, pattern: str, args: ArgsT) -> bool:
        """Whether a rule `"<name>: <pattern>"` allows this call; plain tools know no patterns."""
        return False

    def runs_sandboxed(self, args: ArgsT) -> bool:
        """Whether this call would run inside the OS sandbox (only commands can)."""
        return False

    def leaves_sandbox(self, args: ArgsT) -> bool:
        """Whether this call asks to run outside an active sandbox (it always asks the person)."""
        return False

    def describe(self, args: ArgsT) -> str:
        return self.name

    def stops_batch(self, args: ArgsT) -> bool:
        """Part of the call's execution descriptor, read before any call of the batch runs:
        True means the calls after this one in the batch never start (each is answered as
        skipped). A result may still ask the same with `stop_batch_after_this`, which then
        skips only the later calls that have not started yet."""
        return False

    async def check(self, args: ArgsT) -> str | None:
        """Why the call cannot work, found without changing anything (an edit whose text is
        not in the file), or None. Asked before the user is: nobody should approve a call
        that is bound to fail."""
        return None

    async def preview(self, args: ArgsT) -> str:
        """What the user approves: a diff for edits, the command for a shell call."""
        return self.describe(args)

    async def proposed_change(self, args: ArgsT) -> FileChange | None:
        """The file change this call would make, whole texts before and after (edits and
        writes), for a front end that draws the diff itself; None for every other tool."""
        return None

    def written_paths(self, args: ArgsT) -> tuple[str, ...]:
        """The files this call writes, as the model named them, so that their prior content can
        be kept first (a checkpoint for /undo). A tool that cannot name them (shell) says none."""
        return ()

    def rule_subjects(self, args: ArgsT) -> tuple[ArgsT, ...] | None:
        """The parts permission rules judge one by one (a shell command's simple commands):
        every part must be allowed, any part denied denies. None: the call cannot be split
        (an unreadable command), so no rule can allow it."""
        return (args,)

    def plan_safe(self, args: ArgsT) -> bool:
        """Whether the call may run in plan mode: it changes nothing."""
        return self.read_only

    @abstractmethod
    async def execute(self, args: ArgsT, ctx: ToolContext) -> ToolResult: ...

    def spec(self) -> ToolSpec:
        schema = _clean_schema(self.Args.model_json_schema())
        return ToolSpec(name=self.name, description=self.description, parameters=schema)


def _clean_schema(schema: Any) -> Any:
    """Drop pydantic's titles (they repeat the field names) and show an optional field as its
    plain type, so the model reads `"offset": {"type": "integer"}`, not an anyOf with null."""
    if isinstance(schema, list):
        return [_clean_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    if (
        isinstance(options, list)
        and len(options) == 2
        and {"type": "null"} in options
        and schema.get("default", ...) is None
    ):
        rest = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
        schema = {**next(o for o in options if o != {"type": "null"}), **rest}
    cleaned: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "properties" and isinstance(value, dict):
            cleaned[key] = {name: _clean_schema(sub) for name, sub in value.items()}
        else:
            cleaned[key] = _clean_schema(value)
    return cleaned
