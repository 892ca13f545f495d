"""The view model: turns the loop's events into the state the widgets draw.

It owns the transcript blocks (the whole session, as plain data, so pruned widgets can be
re-created), the live tool rows, the queue rows (in the order they will enter history), the
pending approvals, the status line values and the machine states for the inspector; their types
are in `ui/state.py`. It holds no Textual object: widgets register a listener and receive small
`Change` values, then read the state they need. Everything runs on the app's asyncio loop, so no
locking is needed.

One piece (680 lines): it is the one place that reads the loop's
event words, one short arm per event type next to the state those arms keep; split, a reader
would chase one event across files.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from tui_agent.ui.state import (
    Approval,
    Block,
    BlockAdded,
    BlockRemoved,
    BlockUpdated,
    Change,
    Listener,
    Machines,
    MarkerBlock,
    MarkerKind,
    PaneChanged,
    QueueKind,
    QueueRow,
    Reset,
    RetryBlock,
    Status,
    StreamEnded,
    TextAppended,
    TextBlock,
    ThinkingBlock,
    ToolBlock,
    ToolRow,
    UserBlock,
    UserVia,
)

if TYPE_CHECKING:  # the loop's types: the view model is built for the first frame without them
    from tui_agent.loop.events import (
        Drained,
        LoopEvent,
        McpServerInfo,
        PromptQueued,
        Retrying,
        StepCompleted,
        ToolFinished,
        ToolStarted,
        ToolUpdated,
        TurnFinished,
        TurnStarted,
    )
    from tui_agent.loop.info import LoopInfo
    from tui_agent.loop.snapshot import LoopSnapshot
    from tui_agent.vocab import ApprovalMode, PlanItem

# Tool output kept per block: enough to read, bounded so a chatty command cannot bloat memory.
OUTPUT_CAP = 20_000
TAIL_CHARS = 60
USER_COMMAND = "!"  # the tool name of a `!command` the person runs
# What a call's one line shows: its tool's own primary argument (`Tool.facts`), else the first
# of these it has (a tool of an MCP server declares none).
PRIMARY_ARGS = ("command", "path", "pattern", "file_path", "description")

_ID_LESS: tuple[QueueKind, ...] = ("notification", "reminder")
# Transcript events replayed between two turns of the event loop when a long session loads
# (`ViewModel.loaded`): 10-15 ms of work on this project's machine (a day's tool calls).
LOAD_SLICE = 400


class ViewModel:
    """The state of the screen, kept current by `apply(event)`."""

    def __init__(self, info: LoopInfo, *, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.blocks: list[Block] = []
        self.tools: dict[str, ToolRow] = {}
        self.queue: list[QueueRow] = []
        self.approvals: list[Approval] = []
        self.machines = Machines()
        self.plan: tuple[PlanItem, ...] = ()  # the model's plan (`todo_write`), newest
        self.status = _status_from(info)
        self._session_model = info.model
        self.history: list[str] = []  # the user's own prompts, oldest first, for Up/Down
        self.mcp: tuple[McpServerInfo, ...] = ()  # the loop's MCP servers, for /mcp and status
        self._listeners: list[Listener] = []
        self._next_id = 0
        self._tool_blocks: dict[str, ToolBlock] = {}
        self._open_text: TextBlock | None = None
        self._open_thinking: ThinkingBlock | None = None
        self._attempt_blocks: list[TextBlock | ThinkingBlock] = []
        self._retry: RetryBlock | None = None
        self._calls_in_turn = 0

    # ------------------------------------------------------------ listeners

    def listen(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, change: Change) -> None:
        for listener in tuple(self._listeners):
            listener(change)

    # ------------------------------------------------------------ loading and resetting

    def reset(
        self,
        info: LoopInfo,
        transcript: Iterable[LoopEvent],
        snapshot: LoopSnapshot,
        *,
        welcome: str | None = None,
    ) -> None:
        """Start over for a (new or resumed) session: the `welcome` block first, then the
        transcript's events replayed through `apply`, as they were drawn live, then the panes
        from the snapshot."""
        self._clear(info, welcome)
        self._load_transcript(transcript)
        self._load_snapshot(snapshot)
        self._emit(Reset())

    async def loaded(
        self, info: LoopInfo, transcript: Sequence[LoopEvent], *, welcome: str | None = None
    ) -> ViewModel:
        """`reset`'s replay for a long transcript (a day of turns is tens of thousands of
        events, a quarter of a second and more in one go), into a scratch view model, LOAD_SLICE
        events at a time with a turn of the event loop between slices. `take` it over."""
        scratch = copy.copy(self)  # what a reset keeps (prompt history, ids) carries over
        scratch._listeners = []
        scratch._clear(info, welcome)
        for start in range(0, len(transcript), LOAD_SLICE):
            scratch._load_transcript(transcript[start : start + LOAD_SLICE], last=False)
            await asyncio.sleep(0)
        scratch._load_transcript((), last=True)
        return scratch

    def take(self, loaded: ViewModel, snapshot: LoopSnapshot) -> None:
        """The state of `loaded` at once (no listener sees a half-loaded session), then the
        panes from the snapshot, as `reset` ends."""
        listeners = self._listeners
        self.__dict__.update(loaded.__dict__)
        self._listeners = listeners
        self._load_snapshot(snapshot)
        self._emit(Reset())

    def _clear(self, info: LoopInfo, welcome: str | None) -> None:
        self.blocks = []
        self.tools = {}
        self.queue = []
        self.approvals = []
        self.machines = Machines()
        self.status = _status_from(info)
        self._session_model = info.model
        self._tool_blocks = {}
        self._open_text = self._open_thinking = None
        self._attempt_blocks = []
        self._retry = None
        if welcome is not None:
            self.blocks.append(MarkerBlock(self._new_id(), "welcome", welcome))

    def _load_transcript(self, transcript: Iterable[LoopEvent], *, last: bool = True) -> None:
        """Replay transcript events; `last`: no more follow, so what was left running ends."""
        listeners, self._listeners = self._listeners, []  # one Reset tells them afterwards
        try:
            for event in transcript:
                self.apply(event)
                if event.type == "turn.started":
                    for text in event.texts:
                        self.remember_prompt(text)
            if not last:
                return
            # Whatever a crash left running is over now; the snapshot says what still runs.
            self._close_streams()
        finally:
            self._listeners = listeners
        self.tools = {}
        self.queue = []
        self.approvals = []
        self.status.activity = "idle"
        self.status.step = 0

    def _load_snapshot(self, snapshot: LoopSnapshot) -> None:
        self._load_queue(snapshot)
        for tool in snapshot.tools:
            self.tools[tool.call_id] = ToolRow(
                tool.call_id, tool.name, "", tool.state, tool.started_at, _tail(tool.output_tail)
            )
        for machine_id, state in snapshot.machine_states.items():
            self.machines.set_state(machine_id, state)
        self.plan = snapshot.plan
        if not snapshot.agent_state.startswith(("idle", "closed")):
            self.status.activity = "running"
            self.status.step = snapshot.step

    def _load_queue(self, snapshot: LoopSnapshot) -> None:
        for pending in snapshot.notifications:
            kind = _queue_kind(pending.source)
            self.queue.append(
                QueueRow(kind, pending.text, key=pending.key, steer_ids=pending.prompt_ids)
            )
        for prompt in snapshot.queue:
            self.queue.append(QueueRow("prompt", prompt.text, prompt_id=prompt.prompt_id))

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    # ------------------------------------------------------------ public reads

    @property
    def busy(self) -> bool:
        return self.status.activity != "idle"

    def agent_label(self) -> str:
        """The agent state as the status bar says it."""
        if self.approvals:
            return "awaiting approval"
        activity = self.status.activity
        if activity == "running":
            return f"step {self.status.step}" if self.status.step else "starting"
        return activity

    def add_marker(self, kind: MarkerKind, text: str) -> None:
        """A line the UI itself writes (help, command results)."""
        self._close_streams()
        self._add(MarkerBlock(self._new_id(), kind, text))

    def add_user_command(self, command: str) -> ToolBlock:
        """A `!command` the user runs: drawn as a shell call, updated by `user_command_output`."""
        self._close_streams()
        block_id = self._new_id()
        block = tool_block(
            block_id, f"user-{block_id}", USER_COMMAND, json.dumps({"command": command})
        )
        block.state = "running"
        self._add(block)
        return block

    def user_command_output(
        self, block: ToolBlock, text: str, *, state: str | None = None, exit_code: int | None = None
    ) -> None:
        """More output of a `!command`, or (with `state`) all of it once it ended."""
        block.output = (block.output + text)[-OUTPUT_CAP:] if state is None else text[-OUTPUT_CAP:]
        if state is not None:
            block.state = state
            block.is_error = state == "failed"
        if exit_code is not None:
            block.display = {"exit_code": exit_code}
        self._emit(BlockUpdated(block))

    def set_approval_mode(self, mode: ApprovalMode) -> None:
        self.status.approval_mode = mode
        self._emit(PaneChanged("status"))

    def set_mcp(self, servers: tuple[McpServerInfo, ...]) -> None:
        self.mcp = servers
        self._emit(PaneChanged("status"))

    def answers(self) -> list[str]:
        """The assistant's texts in the transcript, oldest first (for /copy)."""
        return [b.text for b in self.blocks if isinstance(b, TextBlock) and b.text.strip()]

    def remember_prompt(self, text: str) -> None:
        if text.strip() and (not self.history or self.history[-1] != text):
            self.history.append(text)

    # ------------------------------------------------------------ events

    def apply(self, event: LoopEvent) -> None:
        from tui_agent.loop import events as ev  # loaded with the loop, after the first frame

        match event:
            case ev.PromptQueued():
                self._on_prompt_queued(event)
            case ev.PromptRemoved():
                if event.reason != "edited":
                    self._drop_prompts({event.prompt_id})
            case ev.PromptSteered():
                self._drop_prompts(set(event.prompt_ids))
                self._add_pending(QueueRow("steer", event.text, steer_ids=event.prompt_ids))
            case ev.NotificationQueued():
                self._add_pending(QueueRow(_queue_kind(event.source), event.text, key=event.key))
            case ev.TurnStarted():
                self._on_turn_started(event)
            case ev.StepStarted():
                self._close_streams()
                self._resolve_retry()
                self._attempt_blocks = []
                self.status.step = event.step
                if self.status.activity != "cancelling":
                    self.status.activity = "running"
                self._emit(PaneChanged("status"))
            case ev.AssistantDelta():
                self._on_text(event.text, event.turn_id, event.step)
            case ev.ThinkingDelta():
                self._on_thinking(event.text, event.turn_id, event.step)
            case ev.AttemptDiscarded():
                self._discard_attempt()
            case ev.Retrying():
                self._on_retrying(event)
            case ev.StepCompleted():
                self._on_step_completed(event)
            case ev.ToolStarted():
                self._on_tool_started(event)
            case ev.ToolStateChanged():
                self._on_tool_state(event.id, event.state, event.ts)
            case ev.ToolUpdated():
                self._on_tool_output(event)
            case ev.ToolFinished():
                self._on_tool_finished(event)
            case ev.ApprovalRequested():
                # A sub-agent asks under its task's call (a task never asks for itself).
                row = self.tools.get(event.call_id)
                self.approvals.append(
                    Approval(
                        event.request_id,
                        event.call_id,
                        event.name,
                        event.summary,
                        event.rule,
                        event.preview,
                        event.kind,
                        event.rules,
                        event.sandboxed,
                        event.why,
                        row.summary if row is not None and row.name == "task" else "",
                    )
                )
                self._emit(PaneChanged("approvals"))
                self._emit(PaneChanged("status"))
            case ev.ApprovalResolved():
                self.approvals = [a for a in self.approvals if a.request_id != event.request_id]
                self._emit(PaneChanged("approvals"))
                self._emit(PaneChanged("status"))
            case ev.Drained():
                self._on_drained(event)
            case ev.Compacted():
                before, after = tokens_text(event.tokens_before), tokens_text(event.tokens_after)
                self.add_marker("compacted", f"context compacted: {before} → {after} tokens")
            case ev.TurnAborting():
                self.status.activity = "cancelling"
                self._emit(PaneChanged("status"))
            case ev.UsageChanged():
                self.status.tokens_in = event.total.input
                self.status.tokens_out = event.total.output
                self.status.cache_read = event.total.input_cache_read
                self.status.cache_write = event.total.input_cache_creation
                self.status.cost_usd = event.cost_usd
                self.status.context_tokens = event.context_tokens
                self.status.context_window = event.context_window
                self._emit(PaneChanged("status"))
            case ev.MachineTransition():
                self.machines.record(event)
                self._emit(PaneChanged("machines"))
            case ev.TurnFinished():
                self._on_turn_finished(event)
            case ev.PlanUpdated():
                self.plan = event.todos
                self._emit(PaneChanged("plan"))
            case ev.Notice():
                kind: MarkerKind = "notice" if event.level == "info" else event.level
                self.add_marker(kind, event.text)
            case ev.ModeChanged():
                self.set_approval_mode(event.mode)
            case ev.McpServersChanged():
                self.set_mcp(event.servers)

    # ------------------------------------------------------------ event helpers

    def _add(self, block: Block) -> None:
        self.blocks.append(block)
        self._emit(BlockAdded(block))

    def _close_streams(self) -> None:
        for block in (self._open_thinking, self._open_text):
            if block is not None:
                block.streaming = False
                self._emit(StreamEnded(block))
        self._open_text = self._open_thinking = None

    def _resolve_retry(self) -> None:
        if self._retry is not None:
            self._retry.resolved = True
            self._emit(BlockUpdated(self._retry))
            self._retry = None

    def _on_prompt_queued(self, event: PromptQueued) -> None:
        # An edit is reported as removed("edited") + queued again with the same id: in place.
        row = next((r for r in self.queue if r.prompt_id == event.prompt_id), None)
        if row is not None:
            row.text = event.text
        else:
            self.queue.append(QueueRow("prompt", event.text, prompt_id=event.prompt_id))
        self._emit(PaneChanged("queue"))

    def sync_queue(self, snapshot: LoopSnapshot) -> None:
        """Take the queue's order from the loop (a move is not reported as an event)."""
        self.queue = []
        self._load_queue(snapshot)
        self._emit(PaneChanged("queue"))

    def _drop_prompts(self, prompt_ids: set[str]) -> None:
        before = len(self.queue)
        self.queue = [r for r in self.queue if r.prompt_id not in prompt_ids]
        if len(self.queue) != before:
            self._emit(PaneChanged("queue"))

    def _add_pending(self, row: QueueRow) -> None:
        """Pending items enter history before any queued prompt: keep them ahead of prompts."""
        if row.key is not None:
            self.queue = [r for r in self.queue if not (r.kind == row.kind and r.key == row.key)]
        at = next((i for i, r in enumerate(self.queue) if r.kind == "prompt"), len(self.queue))
        self.queue.insert(at, row)
        self._emit(PaneChanged("queue"))

    def _on_turn_started(self, event: TurnStarted) -> None:
        self._close_streams()
        self._drop_prompts(set(event.prompt_ids))
        self._calls_in_turn = 0
        for text in event.texts:
            self._add(UserBlock(self._new_id(), text, "prompt"))
        self.status.activity = "running"
        self.status.step = 0
        if event.model is not None:  # a custom command's `model:`, for this turn only
            self.status.model = event.model
            self.add_marker("info", f"this turn: {event.model}")
        self._emit(PaneChanged("status"))

    def _on_text(self, text: str, turn_id: int, step: int) -> None:
        self._resolve_retry()
        if self._open_thinking is not None:
            self._open_thinking.streaming = False
            self._emit(StreamEnded(self._open_thinking))
            self._open_thinking = None
        block = self._open_text
        if block is None:
            block = self._open_text = TextBlock(self._new_id(), turn_id=turn_id, step=step)
            self._attempt_blocks.append(block)
            self._add(block)
        block.text += text
        self._emit(TextAppended(block, text))

    def _on_thinking(self, text: str, turn_id: int, step: int) -> None:
        self._resolve_retry()
        if self._open_text is not None:
            self._close_streams()
        block = self._open_thinking
        if block is None:
            block = self._open_thinking = ThinkingBlock(self._new_id(), turn_id=turn_id, step=step)
            self._attempt_blocks.append(block)
            self._add(block)
        block.text += text
        self._emit(TextAppended(block, text))

    def _discard_attempt(self) -> None:
        self._close_streams()
        for block in self._attempt_blocks:
            if block in self.blocks:
                self.blocks.remove(block)
                self._emit(BlockRemoved(block))
        self._attempt_blocks = []

    def _on_retrying(self, event: Retrying) -> None:
        self._discard_attempt()
        retry = self._retry
        if retry is not None:  # the same step failed again: fold it into the same line
            retry.attempt, retry.max_attempts = event.attempt, event.max_attempts
            retry.error_code, retry.message, retry.status = (
                event.error_code,
                event.message,
                event.status,
            )
            retry.deadline = event.ts + event.delay_s
            retry.failures += 1
            self._emit(BlockUpdated(retry))
        else:
            self._retry = RetryBlock(
                self._new_id(),
                event.attempt,
                event.max_attempts,
                event.error_code,
                event.message,
                deadline=event.ts + event.delay_s,
                status=event.status,
            )
            self._add(self._retry)
        self.status.activity = "retrying"
        self._emit(PaneChanged("status"))

    def _on_step_completed(self, event: StepCompleted) -> None:
        # A provider that does not stream still reports the whole text here.
        streamed = {type(b) for b in self._attempt_blocks}
        if event.thinking.strip() and ThinkingBlock not in streamed:
            self._add(ThinkingBlock(self._new_id(), event.thinking, streaming=False))
        if event.text.strip() and TextBlock not in streamed:
            self._add(TextBlock(self._new_id(), event.text, streaming=False))
        self._close_streams()
        self._attempt_blocks = []

    def _on_tool_started(self, event: ToolStarted) -> None:
        self._close_streams()
        block = tool_block(self._new_id(), event.id, event.name, event.arguments)
        self._tool_blocks[event.id] = block
        self._add(block)
        self._calls_in_turn += 1
        self.tools[event.id] = ToolRow(
            event.id,
            event.name,
            block.summary,
            "queued",
            event.ts,
            index=self._calls_in_turn,
            detail=block.detail,
        )
        self._emit(PaneChanged("tools"))

    def _on_tool_state(self, call_id: str, state: str, ts: float) -> None:
        block = self._tool_blocks.get(call_id)
        if block is not None and block.state != state:
            block.state = state
            self._emit(BlockUpdated(block))
        row = self.tools.get(call_id)
        if row is not None:
            if state == "running" and row.state != "running":
                row.started_at = ts  # elapsed counts from when it really started
            row.state = state
            self._emit(PaneChanged("tools"))

    def _on_tool_output(self, event: ToolUpdated) -> None:
        block = self._tool_blocks.get(event.id)
        if block is not None:
            block.output = (block.output + event.text)[-OUTPUT_CAP:]
            self._emit(BlockUpdated(block))
        row = self.tools.get(event.id)
        if row is not None:
            row.recent = (row.recent + event.text)[-4 * TAIL_CHARS :]
            row.tail = _tail(row.recent)
            self._emit(PaneChanged("tools"))

    def _on_tool_finished(self, event: ToolFinished) -> None:
        block = self._tool_blocks.get(event.id)
        if block is None:
            block = tool_block(self._new_id(), event.id, event.name, "")
            self._tool_blocks[event.id] = block
            self._add(block)
        block.state = event.status
        block.output = event.output[-OUTPUT_CAP:]
        block.is_error = event.is_error
        block.display = event.display
        self._emit(BlockUpdated(block))
        if event.background and event.id in self.tools:
            self.tools[event.id].state = "detached"
        else:
            self.tools.pop(event.id, None)
        self.approvals = [a for a in self.approvals if a.call_id != event.id]
        self._emit(PaneChanged("tools"))

    def _on_drained(self, event: Drained) -> None:
        """Steers leave the pane by their prompt ids; notifications and reminders (which have
        no id) by their text, the one thing the event says of them."""
        self._close_streams()
        drained = set(event.prompt_ids)
        self.queue = [r for r in self.queue if not drained.intersection(r.steer_ids)]
        for text in event.texts:
            row = next((r for r in self.queue if r.kind in _ID_LESS and r.text == text), None)
            via: UserVia = "steer"
            if row is not None:
                self.queue.remove(row)
                via = "notification"
            self._add(UserBlock(self._new_id(), text, via))
        self._emit(PaneChanged("queue"))

    def _on_turn_finished(self, event: TurnFinished) -> None:
        self._close_streams()
        self._resolve_retry()
        marker = event.result.marker()
        if marker is not None:
            self.add_marker(*marker)
        self.status.activity = "idle"
        self.status.step = 0
        self.status.model = self._session_model  # back from a turn's own model
        self.approvals = []
        for call_id, row in list(self.tools.items()):
            if row.state != "detached":
                del self.tools[call_id]
        self._emit(PaneChanged("tools"))
        self._emit(PaneChanged("approvals"))
        self._emit(PaneChanged("status"))


def tool_block(block_id: int, call_id: str, name: str, arguments: str) -> ToolBlock:
    """A call's block, with the line that says what it does (`describe_call`)."""
    summary, detail = describe_call(name, arguments)
    return ToolBlock(block_id, call_id, name, arguments, summary=summary, detail=detail)


def describe_call(name: str, arguments: str) -> tuple[str, str]:
    """The summary: one line saying what the call does (the command, the path, the pattern and
    where it searches, or for `todo_write` how the plan stands); and the detail: the summary and
    then the other short arguments, so two calls of one tool differ (`TODO in src ·
    glob='*.py'`, `notes.md · offset=200`)."""
    summary, used, args = _described(name, arguments)
    if args is None:
        return summary, summary
    rest = [
        f"{k}={v!r}"
        for k, v in args.items()
        if k not in used and isinstance(v, str | int | float | bool) and len(repr(v)) <= 40
    ]
    return summary, " · ".join([summary, *rest]) if used else ", ".join(rest)[:80]


def _described(name: str, arguments: str) -> tuple[str, tuple[str, ...], dict[str, Any] | None]:
    """The summary, the arguments it shows, and the parsed arguments (None: not an object)."""
    try:
        args = json.loads(arguments) if arguments else {}
    except ValueError:
        return arguments[:80], (), None
    if not isinstance(args, dict):
        return str(args)[:80], (), None
    if name == "todo_write" and isinstance(args.get("todos"), list):
        return _todo_summary(args["todos"]), ("todos",), args
    pattern, path = args.get("pattern"), args.get("path")
    if isinstance(pattern, str) and "command" not in args:
        if isinstance(path, str) and path:
            return f"{_first_line(pattern)} in {path}", ("pattern", "path"), args
        return _first_line(pattern), ("pattern",), args
    from tui_agent.loop.tool_facts import tool_facts  # the tools' facts load with the loop

    own = tool_facts(name).primary_arg  # a built-in tool names its own
    for key in ((own,) if own else ()) + PRIMARY_ARGS:
        if isinstance(args.get(key), str):
            return _first_line(args[key]), (key,), args
    return ", ".join(f"{k}={v!r}" for k, v in list(args.items())[:2])[:80], (), args


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


TODO_WORDS = {"completed": "done", "in_progress": "in progress", "pending": "pending"}


def _todo_summary(todos: list[Any]) -> str:
    """`3 todos: 1 done, 1 in progress, 1 pending`: what a plan update changes, in a line."""
    counts = {word: 0 for word in TODO_WORDS.values()}
    for todo in todos:
        status = todo.get("status") if isinstance(todo, dict) else None
        word = TODO_WORDS.get(status) if isinstance(status, str) else None
        if word is not None:
            counts[word] += 1
    parts = [f"{n} {word}" for word, n in counts.items() if n]
    head = f"{len(todos)} todo{'s' if len(todos) != 1 else ''}"
    return f"{head}: {', '.join(parts)}" if parts else head


def _status_from(info: LoopInfo) -> Status:
    return Status(
        provider=info.provider,
        model=info.model,
        approval_mode=info.approval_mode,
        session_id=info.session_id,
        demo=info.demo,
        context_window=info.context_window,
        sandbox=info.sandbox.label if info.sandbox is not None else "",
    )


def _queue_kind(source: str) -> QueueKind:
    if source == "steer":
        return "steer"
    if source == "reminder":
        return "reminder"
    return "notification"


def _tail(text: str) -> str:
    """The last non-empty line, shortened from the left so the newest characters show."""
    lines = [line for line in text.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return last[-TAIL_CHARS:]


def tokens_text(tokens: int) -> str:
    """A token count as the status line and the compaction notice say it: `950`, `12.3k`,
    `1.2M`."""
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}M"
    if tokens >= 1000:
        return f"{tokens / 1000:.1f}k"
    return str(tokens)
