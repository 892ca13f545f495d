"""One LLM request, provider-neutral: built fresh by the loop after the step gate."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tui_agent.vocab.messages import Message
from tui_agent.vocab.tools import ToolSpec


class LLMRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    model: str
    system: str = ""
    messages: tuple[Message, ...] = ()
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int | None = None
    temperature: float | None = None
    echo_reasoning: bool = False  # some providers need reasoning echoed on assistant turns
    extra: dict[str, object] = Field(default_factory=dict)
