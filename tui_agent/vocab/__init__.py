"""The shared vocabulary: messages, usage, finish reasons, errors, stream events, tool results.

Imports nothing of ours; every other layer imports it.
"""

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
    Spill,
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
    "TextDelta",
    "TextPart",
    "ThinkDelta",
    "ThinkPart",
    "TokenUsage",
    "ToolCall",
    "ToolCallDelta",
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
