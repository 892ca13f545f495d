"""What the model is sent for a history: tool result wording and wire-valid message order."""

from __future__ import annotations

from tests.context.context_builders import entry, problems
from tui_agent.context import (
    EMPTY_OUTPUT,
    ERROR_EMPTY_OUTPUT,
    ERROR_PREFIX,
    INTERRUPTED_TOOL_OUTPUT,
    project,
)
from tui_agent.vocab import (
    EntryMeta,
    HistoryEntry,
    ImagePart,
    Message,
    TextPart,
    ThinkPart,
    ToolCall,
)


def _exchange(*results: HistoryEntry, calls: tuple[str, ...] = ("c1",)) -> list[HistoryEntry]:
    tool_calls = [ToolCall(id=call_id, name="shell") for call_id in calls]
    return [entry("user", "go"), entry("assistant", calls=tool_calls), *results]


def test_note_is_appended_after_the_output() -> None:
    history = _exchange(entry("tool", "42 lines", call_id="c1", note="<system>cut</system>"))

    assert project(history)[2].text == "42 lines\n<system>cut</system>"


def test_error_result_gets_the_failure_status_line() -> None:
    history = _exchange(entry("tool", "exit 1", call_id="c1", is_error=True))

    message = project(history)[2]
    assert message.text == f"{ERROR_PREFIX}\nexit 1"
    assert message.is_error


def test_empty_error_result_says_the_output_is_empty() -> None:
    history = _exchange(entry("tool", "", call_id="c1", is_error=True))

    assert project(history)[2].text == ERROR_EMPTY_OUTPUT


def test_empty_result_says_so() -> None:
    history = _exchange(entry("tool", "", call_id="c1"))

    assert project(history)[2].text == EMPTY_OUTPUT


def test_media_result_keeps_its_parts_between_status_and_note() -> None:
    image = ImagePart(media_type="image/png", data="AAAA")
    result = HistoryEntry(
        message=Message(role="tool", content=(image,), tool_call_id="c1", is_error=True),
        meta=EntryMeta(source="tool", note="n"),
    )

    content = project(_exchange(result))[2].content

    assert content == (TextPart(text=ERROR_PREFIX), image, TextPart(text="n"))


def test_missing_result_is_filled_and_results_follow_call_order() -> None:
    history = _exchange(entry("tool", "B", call_id="b"), calls=("a", "b"))

    messages = project(history)

    assert [m.tool_call_id for m in messages[2:]] == ["a", "b"]
    assert INTERRUPTED_TOOL_OUTPUT in messages[2].text
    assert problems(messages) == []


def test_stray_tool_messages_and_empty_messages_are_dropped() -> None:
    history = [
        entry("tool", "orphan", call_id="zz"),
        entry("user", "go"),
        HistoryEntry(
            message=Message(role="assistant", content=(ThinkPart(think=""), TextPart(text=" "))),
            meta=EntryMeta(source="llm"),
        ),
        entry("user", "   "),
        entry("assistant", "answer"),
    ]

    messages = project(history)

    assert [(m.role, m.text) for m in messages] == [("user", "go"), ("assistant", "answer")]


def test_vacuous_parts_are_not_sent_but_signed_thinking_is() -> None:
    signed = ThinkPart(think="", signature="sig")
    assistant = HistoryEntry(
        message=Message(
            role="assistant", content=(ThinkPart(think=""), signed, TextPart(text="hi"))
        ),
        meta=EntryMeta(source="llm"),
    )

    assert project([entry("user", "go"), assistant])[1].content == (signed, TextPart(text="hi"))


def test_system_entries_inside_the_history_are_sent_as_user_messages() -> None:
    messages = project([entry("system", "files changed on disk"), entry("user", "go")])

    assert [m.role for m in messages] == ["user", "user"]
    assert messages[0].text == "files changed on disk"
    assert problems(messages) == []
