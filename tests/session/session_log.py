"""A session log written by hand, with fixed times: one of everything a transcript shows."""

from __future__ import annotations

from tui_agent.context import (
    Compaction,
    ContentPartDone,
    Prompt,
    Record,
    SessionMeta,
    Steer,
    StepBegin,
    StepEnd,
    ToolCallStarted,
    ToolResultRecorded,
    TurnBegin,
    TurnEnd,
    TurnOutcome,
)
from tui_agent.vocab import (
    EntryMeta,
    FinishReason,
    HistoryEntry,
    TextPart,
    ThinkPart,
    TokenUsage,
    ToolCall,
    user_message,
)

DIFF = '--- a/hello.py\n+++ b/hello.py\n@@ -1 +1 @@\n-print("helo")\n+print("hello")\n'
START = 1_780_000_000.0
USAGE = TokenUsage(input_other=1000, output=200, input_cache_read=500)


def _turn(turn_id: int, prompt: str, body: list[Record], outcome: TurnOutcome) -> list[Record]:
    return [
        TurnBegin(turn_id=turn_id, prompt_ids=(f"p{turn_id}",)),
        Prompt(prompt_id=f"p{turn_id}", message=user_message(prompt)),
        *body,
        TurnEnd(turn_id=turn_id, result=outcome),
    ]


def _end(uuid: str, reason: FinishReason) -> StepEnd:
    return StepEnd(uuid=uuid, finish_reason=reason, usage=USAGE)


def _step(uuid: str, turn_id: int, step: int) -> StepBegin:
    return StepBegin(uuid=uuid, turn_id=turn_id, step=step)


def session_records(session_id: str = "20261130-120000-abcdef") -> list[Record]:
    edit = ToolCall(
        id="c1",
        name="edit_file",
        arguments='{"path": "hello.py", "old_string": "helo", "new_string": "hello"}',
    )
    slow = ToolCall(id="c2", name="shell", arguments='{"command": "sleep 30"}')
    steer = HistoryEntry(
        message=user_message("and say why"), meta=EntryMeta(source="input", in_turn=True)
    )
    records: list[Record] = [
        SessionMeta(
            session_id=session_id,
            workspace="/work/demo",
            provider="scripted",
            model="demo",
        ),
        *_turn(
            1,
            "fix the greeting",
            [
                _step("s1", 1, 1),
                ContentPartDone(step_uuid="s1", part=ThinkPart(think="A typo.")),
                ContentPartDone(step_uuid="s1", part=TextPart(text="Fixing it.")),
                ToolCallStarted(step_uuid="s1", call=edit),
                ToolResultRecorded(
                    call_id="c1",
                    output="Edited hello.py (1 replacement).",
                    display={"path": "hello.py", "diff": DIFF},
                    outcome="succeeded",
                ),
                StepEnd(uuid="s1", finish_reason=FinishReason.TOOL_USE, usage=USAGE),
                Steer(prompt_ids=("p9",), entry=steer),
                _step("s2", 1, 2),
                ContentPartDone(step_uuid="s2", part=TextPart(text="Done: typo.")),
                StepEnd(uuid="s2", finish_reason=FinishReason.END_TURN, usage=USAGE),
            ],
            TurnOutcome(type="completed", steps=2),
        ),
        *_turn(
            2,
            "wait a bit",
            [
                _step("s3", 2, 1),
                ToolCallStarted(step_uuid="s3", call=slow),
                ToolResultRecorded(
                    call_id="c2",
                    output='Tool "shell" was aborted (user_stopped_call).',
                    is_error=True,
                    outcome="aborted",
                ),
                StepEnd(uuid="s3", finish_reason=FinishReason.INTERRUPTED, usage=USAGE),
            ],
            TurnOutcome(type="cancelled", steps=1, reason="user_cancelled"),
        ),
        *_turn(
            3,
            "try again",
            [
                _step("s4", 3, 1),
                StepEnd(uuid="s4", finish_reason=FinishReason.ERROR),
            ],
            TurnOutcome(type="failed", steps=1, error={"code": "llm.auth", "message": "bad key"}),
        ),
        Compaction(summary="They fixed a typo.", tokens_before=3400, tokens_after=120),
    ]
    # One second apart, in log order.
    return [record.model_copy(update={"ts": START + n}) for n, record in enumerate(records)]
