"""The shared vocabulary: messages, usage, finish reasons, errors, stream events, tool results.

Imports nothing of ours but the pydantic fence; every other layer imports it. Every pydantic
model of ours is defined here or in a module that imports it, so this is where pydantic's
plugin scan is skipped (`_pydantic_hooks`), before any schema is built (`plan.py`'s model
builds its own as it is defined).
"""

# ruff: noqa: E402 (the scan is skipped before the modules below define their models)

from tui_agent._pydantic_hooks import skip_plugin_scan

skip_plugin_scan()

from tui_agent.vocab.abort import AbortSignal
from tui_agent.vocab.approval import APPROVAL_MODES, RULE_SCOPES, ApprovalMode, RuleScope
from tui_agent.vocab.errors import (
    RETRYABLE_STATUS,
    ErrorCode,
    LLMError,
    LLMErrorKind,
    LoopError,
    TurnError,
    max_steps_exceeded,
)
from tui_agent.vocab.finish import Finish, FinishReason
from tui_agent.vocab.messages import (
    ContentPart,
    EntryMeta,
    HistoryEntry,
    ImagePart,
    Message,
    PromptDraft,
    Role,
    Source,
    TextPart,
    ThinkPart,
    ToolCall,
    is_vacuous,
    system_message,
    user_message,
)
from tui_agent.vocab.plan import PlanItem, PlanStatus
from tui_agent.vocab.request import LLMRequest
from tui_agent.vocab.stream import (
    Finished,
    MessageIdReported,
    RequestSent,
    StreamEvent,
    StreamFailed,
    TextDelta,
    ThinkDelta,
    ToolCallDelta,
    UsageReported,
)
from tui_agent.vocab.tools import (
    Delivery,
    FileChange,
    Spill,
    TerminalOutput,
    ToolFacts,
    ToolKind,
    ToolResult,
    ToolSpec,
    ToolStatus,
    ToolUpdate,
    error_result,
    marked,
    tool_status,
)
from tui_agent.vocab.usage import TokenUsage

__all__ = [
    "APPROVAL_MODES",
    "RETRYABLE_STATUS",
    "RULE_SCOPES",
    "AbortSignal",
    "ApprovalMode",
    "ContentPart",
    "Delivery",
    "EntryMeta",
    "ErrorCode",
    "FileChange",
    "Finish",
    "FinishReason",
    "Finished",
    "HistoryEntry",
    "ImagePart",
    "LLMError",
    "LLMErrorKind",
    "LLMRequest",
    "LoopError",
    "Message",
    "MessageIdReported",
    "PlanItem",
    "PlanStatus",
    "PromptDraft",
    "RequestSent",
    "Role",
    "RuleScope",
    "Source",
    "Spill",
    "StreamEvent",
    "StreamFailed",
    "TerminalOutput",
    "TextDelta",
    "TextPart",
    "ThinkDelta",
    "ThinkPart",
    "TokenUsage",
    "ToolCall",
    "ToolCallDelta",
    "ToolFacts",
    "ToolKind",
    "ToolResult",
    "ToolSpec",
    "ToolStatus",
    "ToolUpdate",
    "TurnError",
    "UsageReported",
    "error_result",
    "is_vacuous",
    "marked",
    "max_steps_exceeded",
    "system_message",
    "tool_status",
    "user_message",
]
