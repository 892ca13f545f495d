"""Builders for event-log records and a checker for well-formed histories, shared by tests."""

from __future__ import annotations

from collections.abc import Sequence

from tui_agent.context import (
    ContentPartDone,
    Notification,
    Prompt,
    Record,
    StepBegin,
    StepEnd,
    ToolCallStarted,
    ToolResultRecorded,
    TurnBegin,
    TurnEnd,
    TurnOutcome,
)
from tui_agent.vocab import (
    ContentPart,
    EntryMeta,
    FinishReason,
    HistoryEntry,
    Message,
    TextPart,
    ThinkPart,
    TokenUsage,
    ToolCall,
    is_vacuous,
    user_message,
)


class LogBuilder:
    """Appends records the way the loop writes them; `uuid`s and call ids are generated."""

    def __init__(self) -> None:
        self.records: list[Record] = []
        self._steps = 0
        self._turns = 0

    def prompt(self, text: str, prompt_id: str = "p1") -> LogBuilder:
        self.records.append(Prompt(prompt_id=prompt_id, message=user_message(text)))
        return self

    def turn(self, prompt_ids: tuple[str, ...] = ("p1",)) -> int:
        self._turns += 1
        self.records.append(TurnBegin(turn_id=self._turns, prompt_ids=prompt_ids))
        return self._turns

    def turn_end(self, turn_id: int, kind: str = "completed", steps: int = 1) -> LogBuilder:
        outcome = TurnOutcome.model_validate({"type": kind, "steps": steps})
        self.records.append(TurnEnd(turn_id=turn_id, result=outcome))
        return self

    def step(self) -> str:
        self._steps += 1
        uuid = f"step-{self._steps}"
        self.records.append(StepBegin(uuid=uuid, turn_id=max(self._turns, 1), step=self._steps))
        return uuid

    def text(self, step: str, text: str) -> LogBuilder:
        return self.part(step, TextPart(text=text))

    def think(
        self, step: str, think: str, signature: str | None = None, encrypted: str | None = None
    ) -> LogBuilder:
        return self.part(step, ThinkPart(think=think, signature=signature, encrypted=encrypted))

    def part(self, step: str, part: ContentPart) -> LogBuilder:
        self.records.append(ContentPartDone(step_uuid=step, part=part))
        return self

    def call(
        self, step: str, call_id: str, name: str = "read_file", args: str = "{}"
    ) -> LogBuilder:
        call = ToolCall(id=call_id, name=name, arguments=args)
        self.records.append(ToolCallStarted(step_uuid=step, call=call))
        return self

    def result(
        self, call_id: str, output: str = "ok", *, is_error: bool = False, note: str | None = None
    ) -> LogBuilder:
        self.records.append(
            ToolResultRecorded(call_id=call_id, output=output, is_error=is_error, note=note)
        )
        return self

    def end(
        self,
        step: str,
        reason: FinishReason = FinishReason.END_TURN,
        usage: TokenUsage | None = None,
    ) -> LogBuilder:
        self.records.append(StepEnd(uuid=step, finish_reason=reason, usage=usage))
        return self

    def notify(self, text: str) -> LogBuilder:
        self.records.append(Notification(entry=entry("user", text, source="notify")))
        return self


def entry(
    role: str,
    text: str = "",
    *,
    source: str | None = None,
    calls: Sequence[ToolCall] = (),
    call_id: str | None = None,
    is_error: bool = False,
    usage: TokenUsage | None = None,
    note: str | None = None,
) -> HistoryEntry:
    default_source = {"user": "input", "assistant": "llm", "tool": "tool", "system": "notify"}
    content = (TextPart(text=text),) if text else ()
    message = Message.model_validate(
        {
            "role": role,
            "content": content,
            "tool_calls": tuple(calls),
            "tool_call_id": call_id,
            "is_error": is_error,
        }
    )
    meta = EntryMeta.model_validate(
        {"source": source or default_source[role], "usage": usage, "note": note}
    )
    return HistoryEntry(message=message, meta=meta)


def problems(messages: Sequence[Message]) -> list[str]:
    """Why `messages` would be rejected by Chat Completions or Anthropic Messages (empty: fine).

    Both protocols need: only user/assistant/tool roles inside the conversation, no empty
    assistant or user message, each assistant tool call answered right after it by exactly
    one tool message, in call order, and no tool message anywhere else.
    """
    found: list[str] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        where = f"message {index} ({message.role})"
        index += 1
        if message.role == "system":
            found.append(f"{where}: system role inside the conversation")
        elif message.role == "tool":
            found.append(f"{where}: tool message answers no call")
        elif message.role == "assistant":
            substantive = [part for part in message.content if not is_vacuous(part)]
            if not substantive and not message.tool_calls:
                found.append(f"{where}: empty assistant")
            for call in message.tool_calls:
                if index >= len(messages) or messages[index].role != "tool":
                    found.append(f"{where}: call {call.id} has no result right after it")
                    break
                if messages[index].tool_call_id != call.id:
                    found.append(f"{where}: result {messages[index].tool_call_id} out of order")
                index += 1
        elif all(is_vacuous(part) for part in message.content):
            found.append(f"{where}: empty user message")
    return found


def history_problems(entries: Sequence[HistoryEntry]) -> list[str]:
    """Pairing problems in a history itself (before projection)."""
    return [
        problem
        for problem in problems([entry.message for entry in entries])
        if "empty user" not in problem and "system role" not in problem
    ]
