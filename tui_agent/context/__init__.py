"""History and its persistence: event records, the event log, folding, projection, compaction.

`EventLog` appends records to a session's `events.jsonl` without blocking the loop;
`read_log` reads them back; `fold` turns records into a well-formed history (repairing a step
a crash or cancel left open), `load_history` does both for a file; `project` turns history
into the messages the model is sent;
`ContextMemory` holds the live history and estimates its size; `compact` summarises it;
`PrefixWatch` says when a request stops starting with the previous one (a cache miss).
"""

from tui_agent.context._branches import Branches
from tui_agent.context._bulk import gc_paused
from tui_agent.context._compaction import (
    SUMMARY_INSTRUCTIONS,
    CompactionFailed,
    CompactionResult,
    SummaryModel,
    compact,
    render_transcript,
    split_for_compaction,
)
from tui_agent.context._fold import (
    INTERRUPTED_TOOL_OUTPUT,
    Fold,
    fold,
    interrupted_result,
    load_history,
)
from tui_agent.context._log import (
    EventLog,
    EventLogError,
    describe_bad_lines,
    parse_log,
    read_log,
    read_log_async,
)
from tui_agent.context._memory import (
    CHARS_PER_TOKEN,
    ContextMemory,
    estimate_tokens,
    message_tokens,
)
from tui_agent.context._prefix import PrefixBreak, PrefixWatch, prefix_break
from tui_agent.context._projection import (
    EMPTY_OUTPUT,
    ERROR_EMPTY_OUTPUT,
    ERROR_PREFIX,
    INTERRUPTED_ANSWER,
    project,
    project_tool_result,
    tool_result_text,
)
from tui_agent.context._records import (
    FORMAT_VERSION,
    ApprovalAnswered,
    BranchSwitch,
    Compaction,
    ContentPartDone,
    Entry,
    ErrorReported,
    FileCheckpoint,
    FilesRestored,
    HookRan,
    Notification,
    Prompt,
    Record,
    Reminder,
    RetryRecorded,
    Rewind,
    SessionMeta,
    Steer,
    StepBegin,
    StepEnd,
    ToolCallStarted,
    ToolResultRecorded,
    TurnBegin,
    TurnEnd,
    TurnOutcome,
    UsageAdded,
    UserCommand,
)
from tui_agent.context._summary import SUMMARY_KEY, is_summary, summary_entry

__all__ = [
    "CHARS_PER_TOKEN",
    "EMPTY_OUTPUT",
    "ERROR_EMPTY_OUTPUT",
    "ERROR_PREFIX",
    "FORMAT_VERSION",
    "INTERRUPTED_ANSWER",
    "INTERRUPTED_TOOL_OUTPUT",
    "SUMMARY_INSTRUCTIONS",
    "SUMMARY_KEY",
    "ApprovalAnswered",
    "BranchSwitch",
    "Branches",
    "Compaction",
    "CompactionFailed",
    "CompactionResult",
    "ContentPartDone",
    "ContextMemory",
    "Entry",
    "ErrorReported",
    "EventLog",
    "EventLogError",
    "FileCheckpoint",
    "FilesRestored",
    "Fold",
    "HookRan",
    "Notification",
    "PrefixBreak",
    "PrefixWatch",
    "Prompt",
    "Record",
    "Reminder",
    "RetryRecorded",
    "Rewind",
    "SessionMeta",
    "Steer",
    "StepBegin",
    "StepEnd",
    "SummaryModel",
    "ToolCallStarted",
    "ToolResultRecorded",
    "TurnBegin",
    "TurnEnd",
    "TurnOutcome",
    "UsageAdded",
    "UserCommand",
    "compact",
    "describe_bad_lines",
    "estimate_tokens",
    "fold",
    "gc_paused",
    "interrupted_result",
    "is_summary",
    "load_history",
    "message_tokens",
    "parse_log",
    "prefix_break",
    "project",
    "project_tool_result",
    "read_log",
    "read_log_async",
    "render_transcript",
    "split_for_compaction",
    "summary_entry",
    "tool_result_text",
]
