"""The SSE decoder: framing rules, and that network chunk boundaries never change the result
(of decoding alone, and of decoding and parsing recorded streams)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.llm.helpers import fixture
from tui_agent.llm._anthropic import AnthropicStreamParser
from tui_agent.llm._errors import ErrorContext
from tui_agent.llm._openai import OpenAIStreamParser
from tui_agent.llm._sse import ServerSentEvent, SSEDecoder


def decode(*chunks: bytes) -> list[ServerSentEvent]:
    decoder = SSEDecoder()
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    return events + decoder.close()


def test_data_and_event_lines_make_one_event() -> None:
    assert decode(b"event: ping\ndata: {}\n\n") == [ServerSentEvent("ping", "{}")]


def test_several_data_lines_join_with_newlines() -> None:
    assert decode(b"data: a\ndata:b\ndata:  c\n\n") == [ServerSentEvent(None, "a\nb\n c")]


def test_comment_lines_are_ignored() -> None:
    stream = b": OPENROUTER PROCESSING\n\n: again\ndata: x\n\n"
    assert decode(stream) == [ServerSentEvent(None, "x")]


def test_crlf_and_lone_cr_line_ends() -> None:
    assert decode(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n") == [
        ServerSentEvent(None, "a"),
        ServerSentEvent(None, "b"),
        ServerSentEvent(None, "c"),
    ]


def test_crlf_split_between_chunks_is_one_line_end() -> None:
    assert decode(b"data: a\r", b"\n", b"data: b\r", b"\n\r\n") == [ServerSentEvent(None, "a\nb")]


def test_final_event_without_a_blank_line_still_counts() -> None:
    assert decode(b'event: message_stop\ndata: {"type":"message_stop"}') == [
        ServerSentEvent("message_stop", '{"type":"message_stop"}')
    ]


def test_event_without_data_is_dropped_and_its_name_forgotten() -> None:
    assert decode(b"event: lonely\n\ndata: x\n\n") == [ServerSentEvent(None, "x")]


def test_byte_order_mark_at_the_start_is_skipped() -> None:
    assert decode("\ufeffdata: x\n\n".encode()) == [ServerSentEvent(None, "x")]


def test_multibyte_character_split_across_chunks() -> None:
    raw = "data: 18°C 😊\n\n".encode()
    cut = raw.index("😊".encode()) + 2
    assert decode(raw[:cut], raw[cut:]) == [ServerSentEvent(None, "18°C 😊")]


_line_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
    max_size=20,
)
_name = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
_event = st.tuples(st.none() | _name, st.lists(_line_text, min_size=1, max_size=4))


@st.composite
def _streams(draw: st.DrawFn) -> tuple[bytes, list[ServerSentEvent]]:
    """A valid stream (one line-end style, comments between events) and its events."""
    end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    events = draw(st.lists(_event, min_size=1, max_size=8))
    parts: list[str] = []
    for name, lines in events:
        if draw(st.booleans()):
            parts.append(f": keep-alive{end}")
        if name is not None:
            parts.append(f"event: {name}{end}")
        parts.extend(f"data: {line}{end}" for line in lines)
        parts.append(end)
    text = "".join(parts)
    if draw(st.booleans()):
        text = text[: -len(end)]  # the last event without its closing blank line
    expected = [ServerSentEvent(name, "\n".join(lines)) for name, lines in events]
    return text.encode(), expected


@settings(max_examples=300, deadline=None)
@given(stream=_streams(), data=st.data())
def test_any_split_into_chunks_decodes_identically(
    stream: tuple[bytes, list[ServerSentEvent]], data: st.DataObject
) -> None:
    raw, expected = stream
    cuts = sorted(data.draw(st.sets(st.integers(0, len(raw)), max_size=12)))
    chunks = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    assert decode(*chunks) == expected
    assert decode(raw) == expected
    assert decode(*(raw[i : i + 1] for i in range(len(raw)))) == expected


def _parsed(name: str, chunks: list[bytes]) -> list[object]:
    ctx = ErrorContext(provider="p", model="m")
    parser = (OpenAIStreamParser if name.startswith("openai") else AnthropicStreamParser)(ctx)
    decoder = SSEDecoder()
    events = [e for chunk in chunks for e in decoder.feed(chunk)] + decoder.close()
    out: list[object] = []
    for event in events:
        out += parser.feed(event)
        if parser.done:
            break
    return out + parser.end()


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(
        [
            "openai_chat/oai_parallel_tool_calls_usage",
            "openai_chat/qwen_dashscope_tool_call_empty_id_continuations",
            "anthropic_messages/ant_text_then_tool_use",
            "anthropic_messages/ant_thinking_then_tool_use",
        ]
    ),
    data=st.data(),
)
def test_recorded_streams_parse_the_same_however_they_are_split(
    name: str, data: st.DataObject
) -> None:
    raw, _ = fixture(name)
    cuts = sorted(data.draw(st.sets(st.integers(0, len(raw)), max_size=40)))
    chunks = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    assert _parsed(name, chunks) == _parsed(name, [raw])
