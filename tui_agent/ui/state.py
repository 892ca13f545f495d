"""The state the UI draws, as plain data: transcript blocks, side-pane rows, the status line,
the machines for the inspector, and the `Change` values the view model sends its listeners.

`ViewModel` (`ui/view_model.py`) is the one writer of these values; widgets only read them.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal

from tui_agent.lazy_dataclass import dataclass

if TYPE_CHECKING:
    from tui_agent.loop.events import MachineTransition
    from tui_agent.vocab import ApprovalMode

TRANSITIONS_KEPT = 200
FINISHED_KEPT = 6  # finished machines the inspector still lists, besides the live ones
FINAL_STATES = frozenset({"closed", "done", "succeeded", "failed", "aborted"})
REASON_CHARS = 80  # a retry line's reason is cut here; the log has the whole message
# A line of `read_file`'s output (numbered like `cat -n`), as against its notes.
NUMBERED_LINE = re.compile(r"^ *\d+\t", re.MULTILINE)

QueueKind = Literal["prompt", "steer", "notification", "reminder"]
UserVia = Literal["prompt", "steer", "notification"]
MarkerKind = Literal[
    "interrupted", "compacted", "notice", "warning", "error", "info", "stopped", "welcome"
]

# ---------------------------------------------------------------- transcript blocks


@dataclass
class UserBlock:
    id: int
    text: str
    via: UserVia = "prompt"


@dataclass
class StreamedBlock:
    """Text the model streams; `streaming` stays True until the step ends."""

    id: int
    text: str = ""
    streaming: bool = True
    turn_id: int = 0
    step: int = 0


@dataclass
class TextBlock(StreamedBlock):
    """Assistant text."""


@dataclass
class ThinkingBlock(StreamedBlock):
    """The model's thinking, shown apart from its answer."""


@dataclass
class ToolBlock:
    id: int
    call_id: str
    name: str
    arguments: str
    state: str = "queued"
    output: str = ""
    is_error: bool = False
    display: dict[str, Any] | None = None
    summary: str = ""  # one line saying what the call does (`describe_call`)
    detail: str = ""  # the summary and the other short arguments (`describe_call`)

    @property
    def line_count(self) -> str:
        """How long the output is, counted as the person would: `20 lines` for a read of 20
        lines of a file (not its `[Showing lines …]` note), the whole output's lines when it
        was saved to a file and only a pointer to it is here."""
        whole = (self.display or {}).get("output_lines")
        if isinstance(whole, int):
            return f"{whole:,} lines, saved whole to a file"
        if self.name == "read_file" and not self.is_error:
            count = len(NUMBERED_LINE.findall(self.output))
        else:
            count = self.output.count("\n") + 1
        return f"{count:,} line{'s' if count != 1 else ''}"

    @property
    def diff(self) -> str | None:
        if self.display and isinstance(self.display.get("diff"), str):
            return str(self.display["diff"])
        return None


@dataclass
class RetryBlock:
    """One line for all the retries of a step: it is updated in place at each new failure."""

    id: int
    attempt: int
    max_attempts: int
    error_code: str
    message: str
    deadline: float
    resolved: bool = False
    status: int | None = None  # HTTP status of the last failure
    failures: int = 1  # failed attempts folded into this line

    @property
    def reason(self) -> str:
        """`HTTP 500 · Internal error`, or the error code: one short line."""
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        if len(first) > REASON_CHARS:
            first = first[: REASON_CHARS - 1] + "…"
        head = f"HTTP {self.status}" if self.status is not None else self.error_code
        return f"{head} · {first}" if first else head


@dataclass
class MarkerBlock:
    id: int
    kind: MarkerKind
    text: str


Block = UserBlock | TextBlock | ThinkingBlock | ToolBlock | RetryBlock | MarkerBlock


# ---------------------------------------------------------------- side panes and status


@dataclass
class ToolRow:
    call_id: str
    name: str
    summary: str  # the one argument that says what the call does (`ToolBlock.summary`)
    state: str
    started_at: float
    tail: str = ""
    recent: str = ""  # the last output characters, from which `tail` (its last line) is cut
    index: int = 0  # the call's number in its turn, from 1 (0: not known, e.g. after a resume)
    detail: str = ""  # the arguments that tell two calls of one tool apart (`ToolBlock.detail`)


@dataclass
class QueueRow:
    kind: QueueKind
    text: str
    prompt_id: str | None = None  # prompts only: what edit/move/cancel/steer address
    key: str | None = None  # reminders: a later reminder with the same key replaces it
    steer_ids: tuple[str, ...] = ()  # steers: the prompts merged into it (leave at their drain)


@dataclass
class Approval:
    request_id: str
    call_id: str
    name: str
    summary: str
    rule: str
    preview: str = ""  # a unified diff for edits and writes, the command for shell, the plan
    kind: Literal["tool", "plan", "trust"] = "tool"
    rules: tuple[str, ...] = ()  # what "always" adds (none: no "always" to offer)
    sandboxed: bool | None = None  # a command: whether it would run inside the sandbox
    why: str = ""  # why it asks when the mode alone would not
    task: str = ""  # a sub-agent's question: the description of the task it works on


@dataclass
class Status:
    provider: str
    model: str  # the running turn's, when it runs on another model than the session's
    approval_mode: ApprovalMode
    session_id: str
    demo: bool
    context_window: int
    activity: str = "idle"  # idle | running | retrying | cancelling
    step: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cache_read: int = 0  # of tokens_in: read from the provider's prompt cache
    cache_write: int = 0  # of tokens_in: written to it
    cost_usd: float | None = None  # the session's, when the model has a price
    context_tokens: int = 0
    sandbox: str = ""  # the commands' sandbox in a few characters ("" when not known)

    @property
    def context_percent(self) -> int:
        if self.context_window <= 0:
            return 0
        return min(100, round(100 * self.context_tokens / self.context_window))


# ---------------------------------------------------------------- changes


@dataclass(frozen=True)
class BlockAdded:
    block: Block


@dataclass(frozen=True)
class BlockUpdated:
    block: Block


@dataclass(frozen=True)
class TextAppended:
    block: TextBlock | ThinkingBlock
    delta: str


@dataclass(frozen=True)
class StreamEnded:
    block: TextBlock | ThinkingBlock


@dataclass(frozen=True)
class BlockRemoved:
    block: Block


@dataclass(frozen=True)
class PaneChanged:
    pane: Literal["tools", "queue", "status", "approvals", "machines", "plan"]


@dataclass(frozen=True)
class Reset:
    """Everything changed at once (a new or resumed session): redraw from the state."""


Change = BlockAdded | BlockUpdated | TextAppended | StreamEnded | BlockRemoved | PaneChanged | Reset
Listener = Callable[[Change], None]


@dataclass
class Machines:
    """Live machines and the last `FINISHED_KEPT` finished ones, in the order they finished."""

    states: dict[str, str] = field(default_factory=dict)  # machine id -> state
    finished: deque[str] = field(default_factory=deque)  # ids in a final state, oldest first
    transitions: deque[MachineTransition] = field(
        default_factory=lambda: deque(maxlen=TRANSITIONS_KEPT)
    )

    def record(self, event: MachineTransition) -> None:
        self.transitions.append(event)
        self.set_state(event.machine_id, event.target)

    def set_state(self, machine_id: str, state: str) -> None:
        self.states[machine_id] = state
        if machine_id in self.finished:
            self.finished.remove(machine_id)
        if state in FINAL_STATES:
            self.finished.append(machine_id)
            while len(self.finished) > FINISHED_KEPT:
                del self.states[self.finished.popleft()]
