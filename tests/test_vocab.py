"""Every vocabulary model round-trips through JSON unchanged (property test)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter

from tui_agent.vocab import (
    Delivery,
    EntryMeta,
    Finish,
    FinishReason,
    HistoryEntry,
    ImagePart,
    LLMError,
    LLMErrorKind,
    LLMRequest,
    LoopError,
    Message,
    Spill,
    StreamEvent,
    TextPart,
    ThinkPart,
    TokenUsage,
    ToolCall,
    ToolResult,
    ToolSpec,
    ToolUpdate,
    max_steps_exceeded,
)
from tui_agent.vocab.stream import (
    Finished,
    MessageIdReported,
    RequestSent,
    StreamFailed,
    TextDelta,
    ThinkDelta,
    ToolCallDelta,
    UsageReported,
)

text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=20)
maybe_text = st.none() | text
counts = st.integers(min_value=0, max_value=10**9)
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | text
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(text, json_values, max_size=3)

usages = st.builds(
    TokenUsage,
    input_other=counts,
    output=counts,
    input_cache_read=counts,
    input_cache_creation=counts,
)
finishes = st.builds(Finish, reason=st.sampled_from(FinishReason), raw=maybe_text)
text_parts = st.builds(TextPart, text=text)
parts = (
    text_parts
    | st.builds(ThinkPart, think=text, signature=maybe_text, encrypted=maybe_text)
    | st.builds(ImagePart, media_type=text, data=text)
)
tool_calls = st.builds(
    ToolCall, id=text, name=text, arguments=text, raw_id=maybe_text, extras=json_objects
)
messages = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    content=st.lists(parts, max_size=3).map(tuple),
    tool_calls=st.lists(tool_calls, max_size=2).map(tuple),
    tool_call_id=maybe_text,
    is_error=st.booleans(),
)
metas = st.builds(
    EntryMeta,
    source=st.sampled_from(
        ["input", "notify", "reminder", "llm", "tool", "salvaged", "async-tool"]
    ),
    key=maybe_text,
    prompt_id=maybe_text,
    prompt_ids=st.lists(text, max_size=2).map(tuple),
    in_turn=st.booleans(),
    created_at=st.none() | st.floats(0, 2e9),
    model=maybe_text,
    usage=st.none() | usages,
    finish=st.none() | finishes,
    message_id=maybe_text,
    note=maybe_text,
)
entries = st.builds(HistoryEntry, message=messages, meta=metas)
llm_errors = st.builds(
    LLMError,
    kind=st.sampled_from(LLMErrorKind),
    message=text,
    status=st.none() | st.integers(100, 599),
    retry_after_s=st.none() | st.floats(0, 1e4),
    finish_reason=st.none() | st.sampled_from(FinishReason),
    provider=maybe_text,
    model=maybe_text,
)
loop_errors = st.builds(LoopError, code=text, message=text, details=json_objects) | st.integers(
    0, 1000
).map(max_steps_exceeded)
specs = st.builds(ToolSpec, name=text, description=text, parameters=json_objects)
tool_results = st.builds(
    ToolResult,
    output=text | st.lists(parts, max_size=2).map(tuple),
    is_error=st.booleans(),
    stop_turn=st.booleans(),
    stop_turn_reason=maybe_text,
    truncated=st.booleans(),
    note=maybe_text,
    delivery=st.none() | st.builds(Delivery, message=messages),
    spill=st.none() | st.builds(Spill, output_path=text, total_chars=counts),
    spill_exempt=st.booleans(),
    stop_batch_after_this=st.booleans(),
    display=st.none() | json_objects,
)
updates = st.builds(ToolUpdate, text=text, data=json_objects)
requests = st.builds(
    LLMRequest,
    model=text,
    system=text,
    messages=st.lists(messages, max_size=2).map(tuple),
    tools=st.lists(specs, max_size=2).map(tuple),
    max_tokens=st.none() | counts,
    temperature=st.none() | st.floats(0, 2),
    echo_reasoning=st.booleans(),
)
stream_events = st.one_of(
    st.just(RequestSent()),
    st.builds(TextDelta, text=text),
    st.builds(ThinkDelta, text=text, signature=maybe_text, encrypted=maybe_text),
    st.builds(
        ToolCallDelta, index=st.integers(0, 64), id=maybe_text, name=maybe_text, arguments=text
    ),
    st.builds(UsageReported, usage=usages),
    st.builds(MessageIdReported, message_id=text),
    st.builds(Finished, finish=finishes),
    st.builds(StreamFailed, error=llm_errors),
)

MODELS: dict[str, st.SearchStrategy[BaseModel]] = {
    "usage": usages,
    "finish": finishes,
    "part": parts,
    "tool_call": tool_calls,
    "message": messages,
    "meta": metas,
    "entry": entries,
    "llm_error": llm_errors,
    "loop_error": loop_errors,
    "tool_spec": specs,
    "tool_result": tool_results,
    "tool_update": updates,
    "request": requests,
}


@pytest.mark.parametrize("name", sorted(MODELS))
@given(data=st.data())
def test_vocab_model_round_trips_through_json(name: str, data: st.DataObject) -> None:
    model = data.draw(MODELS[name])
    assert type(model).model_validate_json(model.model_dump_json()) == model


@given(stream_events)
def test_stream_event_round_trips_through_json_by_its_type_tag(event: Any) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(StreamEvent)
    assert adapter.validate_json(adapter.dump_json(event)) == event


def test_an_entry_names_every_prompt_behind_it_one_way() -> None:
    assert EntryMeta(source="input", prompt_id="p1").all_prompt_ids == ("p1",)
    assert EntryMeta(source="input", prompt_ids=("p1", "p2")).all_prompt_ids == ("p1", "p2")
    assert EntryMeta(source="reminder").all_prompt_ids == ()
