"""MCP servers' requests for input, as front ends see them (the tools layer owns the words)."""

from tui_agent.tools.elicitation import (
    Elicit,
    ElicitAnswer,
    ElicitRequest,
    FieldError,
    FormField,
    Value,
    decline_unanswerable,
)

__all__ = [
    "Elicit",
    "ElicitAnswer",
    "ElicitRequest",
    "FieldError",
    "FormField",
    "Value",
    "decline_unanswerable",
]
