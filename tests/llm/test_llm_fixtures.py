"""Every recorded provider response, served byte for byte from a local socket server.

The expectations below were written by reading each recording (its data lines and sidecar),
not by running our parser. Long texts are pinned by their opening and closing words; the
differential test compares them in full with the official SDKs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from tests.llm.helpers import Outcome, collect, fixture, fixtures_root
from tests.llm.server import LocalServer, Reply, split
from tui_agent.llm import ProviderSettings, make_provider
from tui_agent.vocab import FinishReason, LLMErrorKind, LLMRequest, TokenUsage, user_message

R = FinishReason


@dataclass(frozen=True)
class Want:
    text: str | None = None
    text_starts: str = ""
    text_ends: str = ""
    thinking: str | None = None
    thinking_starts: str = ""
    thinking_ends: str = ""
    calls: tuple[tuple[str, str, str], ...] = ()
    finish: tuple[FinishReason, str | None] | None = None
    usage: TokenUsage | None = None
    message_id: str | None = None
    signature_starts: str = ""
    encrypted_starts: tuple[str, ...] = ()


def U(inp: int, out: int, cache_read: int = 0, cache_write: int = 0) -> TokenUsage:
    return TokenUsage(
        input_other=inp, output=out, input_cache_read=cache_read, input_cache_creation=cache_write
    )


OPENAI_STREAMS: dict[str, Want] = {
    "azure_openai_prompt_filter_first_chunk": Want(
        text="Why did the Opentelemetry developer bring a ladder to the coding competition? "
        "\n\nBecause they wanted to reach new traces!",
        finish=(R.END_TURN, "stop"),
        message_id="chatcmpl-9HpbaAXyt0cAnlWvI8kUAFpZt5jyQ",
    ),
    "deepseek_reasoner_reasoning_content": Want(
        text="Hello there! 😊 How can I help you today?",
        thinking_starts='Hmm, the user just said "Hello".',
        thinking_ends="they might not reply further - and that's okay too.",
        finish=(R.END_TURN, "stop"),
        usage=U(6, 212),
        message_id="33be18fc-3842-486c-8c29-dd8e578f7f20",
    ),
    "deepseek_reasoner_tool_call": Want(
        text="",
        thinking_starts="The user is asking for the weather in San Francisco.",
        thinking_ends='with the location parameter set to "San Francisco".',
        calls=(("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather", '{"location": "San Francisco"}'),),
        finish=(R.TOOL_USE, "tool_calls"),
        usage=U(19, 83, cache_read=320),
        message_id="cca85624-4056-401f-b220-d77601d1f70d",
    ),
    "groq_gpt_oss_reasoning_tool_call": Want(
        text="",
        thinking='We need to call the function with correct parameter "name". '
        'Provide a name, e.g., "example".',
        calls=(
            (
                "fc_bfb39741-3748-4def-9886-a93fc9c64a90",
                "get_something_by_name",
                '{"name":"example"}',
            ),
        ),
        finish=(R.TOOL_USE, "tool_calls"),
        usage=U(304, 49),
        message_id="chatcmpl-e35442a8-12c0-4fb4-8be4-0e51727ce7b7",
    ),
    "mistral_magistral_thinking_content_parts": Want(
        text_starts="To cross the street safely, follow these steps:\n\n1. Look both ways",
        text_ends="By following these steps, you can ensure a safe crossing.",
        thinking_starts="Okay, the user is asking how to cross the street.",
        thinking_ends="Let me compile this information into a clear and concise response.",
        finish=(R.END_TURN, "stop"),
        usage=U(10, 232),
        message_id="9f9d90210f194076abeee223863eaaf0",
    ),
    "oai_finish_length": Want(
        text='{"',
        finish=(R.MAX_TOKENS, "length"),
        usage=U(79, 1),
        message_id="chatcmpl-ABfw3Oqj8RD0z6aJiiX37oTjV2HFh",
    ),
    "oai_n3_interleaved_choices": Want(
        text='{"city":"San Francisco","temperature":65,"units":"f"}',
        finish=(R.END_TURN, "stop"),
        usage=U(79, 42),
    ),
    "oai_parallel_tool_calls_gpt4o": Want(
        text="",
        calls=(
            ("call_q2UyBRP7eXNTzAoR8lEhjc9Z", "get_country", "{}"),
            ("call_b51ijcpFkDiTQG1bQzsrmtW5", "get_product_name", "{}"),
        ),
        finish=(R.TOOL_USE, "tool_calls"),
        usage=U(364, 40),
        message_id="chatcmpl-C2QD1kGWsTW5OWiqAtOSFEAOfPfQH",
    ),
    "oai_parallel_tool_calls_no_usage": Want(
        calls=(
            ("call_uDsEOSTauJkgNI8ciF0AvU0X", "get_weather", '{"location": "New York"}'),
            ("call_If8zqvcIX9JYzEYJ02dlpoBX", "get_weather", '{"location": "London"}'),
        ),
        finish=(R.TOOL_USE, "tool_calls"),
    ),
    "oai_parallel_tool_calls_usage": Want(
        calls=(
            (
                "call_JMW1whyEaYG438VE1OIflxA2",
                "GetWeatherArgs",
                '{"city": "Edinburgh", "country": "GB", "units": "c"}',
            ),
            (
                "call_DNYTawLBoN8fj3KN6qU9N1Ou",
                "get_stock_price",
                '{"ticker": "AAPL", "exchange": "NASDAQ"}',
            ),
        ),
        finish=(R.TOOL_USE, "tool_calls"),
        usage=U(149, 60),
    ),
    "oai_refusal": Want(
        text="I'm sorry, I can't assist with that request.",
        finish=(R.REFUSAL, "stop"),
        usage=U(79, 11),
    ),
    "oai_refusal_with_logprobs": Want(
        text="I'm very sorry, but I can't assist with that.",
        finish=(R.REFUSAL, "stop"),
        usage=U(79, 12),
    ),
    "oai_text_after_tool_result_include_usage": Want(
        text="The capital of the UK is London.", finish=(R.END_TURN, "stop"), usage=U(78, 9)
    ),
    "oai_text_basic_no_usage": Want(
        text="South Atlantic Ocean.",
        finish=(R.END_TURN, "stop"),
        message_id="chatcmpl-ASfaENPdLwpR8Jo5gHFiIL9tuklHK",
    ),
    "oai_text_include_usage": Want(
        text="South Atlantic Ocean.", finish=(R.END_TURN, "stop"), usage=U(24, 4)
    ),
    "oai_text_long_json_mode": Want(
        text_starts='\n  {\n    "location": "San Francisco, CA",\n    "weather": {\n',
        text_ends='"low": "14°C",\n        "condition": "Cloudy"\n      }\n    ]\n  }\n',
        finish=(R.END_TURN, "stop"),
        usage=U(19, 177),
    ),
    "oai_text_with_logprobs": Want(text="Foo!", finish=(R.END_TURN, "stop"), usage=U(9, 2)),
    "oai_tool_call_14_arg_deltas": Want(
        calls=(
            (
                "call_c91SqDXlYFuETYv8mUHzz6pp",
                "GetWeatherArgs",
                '{"city":"Edinburgh","country":"UK","units":"c"}',
            ),
        ),
        finish=(R.TOOL_USE, "tool_calls"),
        usage=U(76, 24),
    ),
    "oai_tool_call_long_arguments": Want(
        calls=(
            (
                "call_CCGIWaMeYWmxOQ91orkmTvzn",
                "final_result",
                '{"answers":[{"label":"Capital","answer":"The capital of Mexico is Mexico City."},'
                '{"label":"Weather","answer":"The weather in Mexico City is currently sunny."},'
                '{"label":"Product Name","answer":"The product name is Pydantic AI."}]}',
            ),
        ),
        finish=(R.TOOL_USE, "tool_calls"),
        usage=U(448, 62),
    ),
    "oai_tool_call_single_include_usage": Want(
        calls=(("call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital", '{"country":"UK"}'),),
        finish=(R.TOOL_USE, "tool_calls"),
        usage=U(53, 15),
    ),
    "oai_tool_call_strict": Want(
        calls=(
            (
                "call_CTf1nWJLqSeRgDqaCG27xZ74",
                "get_weather",
                '{"city":"San Francisco","state":"CA"}',
            ),
        ),
        finish=(R.TOOL_USE, "tool_calls"),
        usage=U(48, 19),
    ),
    "ollama_parallel_tool_calls": Want(
        text="",
        calls=(
            ("call_wteop8bt", "run_command", '{"command":"ls"}'),
            ("call_rk2xye1l", "run_command", '{"command":"ls -l"}'),
        ),
        finish=(R.TOOL_USE, "tool_calls"),
        message_id="chatcmpl-18",
    ),
    "ollama_text": Want(
        text="Atlantic Sea.", finish=(R.END_TURN, "stop"), message_id="chatcmpl-702"
    ),
    "ollama_tools_given_text_answer": Want(
        text_starts="To provide you with the most current information about the weather, I need",
        text_ends='or individual names like "New York City".',
        finish=(R.END_TURN, "stop"),
        message_id="chatcmpl-142",
    ),
    "openrouter_reasoning_details": Want(
        text="2 + 2 = 4",
        thinking="This is a simple arithmetic question. 2+2 equals 4.",
        signature_starts="Et0BCkgIChACGAIqQA2s7h7tA7IG35fbwVkou9PM2hANVJNUwcEM4q12fTRDK6y3v6",
        finish=(R.END_TURN, "stop"),
        usage=U(43, 36),
        message_id="gen-1765226419-AGrwjunAftQIAgweibL8",
    ),
    "qwen_dashscope_tool_call_empty_id_continuations": Want(
        calls=(("call_eee11723464a4b9eb8cee71d", "weather", '{"location": "San Francisco"}'),),
        finish=(R.TOOL_USE, "tool_calls"),
        usage=U(295, 22),
        message_id="chatcmpl-8e243c57-23b3-9db2-a02e-e3c53929c368",
    ),
    "vllm_qwen_tool_call": Want(
        text="",
        calls=(
            (
                "chatcmpl-tool-ca99dda515524c6abe47d1ea22813507",
                "run_command",
                '{"command": "ls"}',
            ),
        ),
        finish=(R.TOOL_USE, "tool_calls"),
        message_id="chatcmpl-d0c68c86be0641129cffa5053c0c217e",
    ),
    "xai_grok_reasoning_then_whole_tool_call": Want(
        text="",
        thinking_starts="First, the user is asking about the weather in San Francisco.",
        thinking_ends="but for now, this is the logical next step.",
        calls=(("call_79382389", "weather", '{"location":"San Francisco"}'),),
        finish=(R.TOOL_USE, "tool_calls"),
        usage=U(1, 26, cache_read=306),
    ),
    "zai_glm_reasoning_content": Want(
        text="4",
        thinking_starts="\n1.  **Analyze the User's Request:**",
        thinking_ends='7.  **Draft the final response:** "4".',
        finish=(R.END_TURN, "stop"),
        usage=U(13, 564),
        message_id="202607010739425543ff9439144b2c",
    ),
}

ANTHROPIC_STREAMS: dict[str, Want] = {
    "ant_adaptive_thinking_text_first": Want(
        text="\n\n1. **Captain Scoop**\n2. **Gullet**",
        thinking="Brief answer with two pet pelican names.",
        signature_starts="EtABCkYICxgCKkCVRmhlD4SUFC1Jfx",
        finish=(R.END_TURN, "end_turn"),
        usage=U(34, 44),
        message_id="msg_016xaB3rMXQHTBuAJvtvxaQx",
    ),
    "ant_max_tokens_truncated_tool_input": Want(
        text_starts="I'll create a comprehensive tax guide for someone with multiple W2s",
        text_ends="taxes.txt. Let me do that for you now.",
        finish=(R.MAX_TOKENS, "max_tokens"),
        usage=U(450, 124),
        message_id="msg_01UdjYBBipA9omjYhicnevgq",
    ),
    "ant_parallel_tool_use": Want(
        text="",
        calls=(
            ("toolu_01LtHJmixrs9NcWQkK8hu8hj", "pelican_name_generator", "{}"),
            ("toolu_01N8a4jWyf116qKTMqKKmjyt", "pelican_name_generator", "{}"),
        ),
        finish=(R.TOOL_USE, "tool_use"),
        usage=U(542, 62),
        message_id="msg_01V2noLbAb2NgKnjaNw6Cn3w",
    ),
    "ant_redacted_thinking": Want(
        text_starts="I notice that you've sent what appears to be some kind of test string",
        text_ends="How can I assist you today with a legitimate task or question?",
        thinking="",
        encrypted_starts=("EqkECkYIBxgCKkA8AZ4n", "EtgBCkYIBxgCKkDQfGkw"),
        finish=(R.END_TURN, "end_turn"),
        usage=U(92, 189),
        message_id="msg_018XZkwvj9asBiffg3fXt88s",
    ),
    "ant_refusal_no_content_blocks": Want(
        text="",
        thinking="",
        finish=(R.REFUSAL, "refusal"),
        usage=U(97, 0),
        message_id="msg_011Cef1BfCEZn512shRMGG4q",
    ),
    "ant_text_after_tool_result": Want(
        text="The weather in San Francisco, CA is currently:\n- **Temperature:** 68°F\n"
        "- **Condition:** Sunny\n\nIt's a nice sunny day!",
        finish=(R.END_TURN, "end_turn"),
        usage=U(770, 38),
        message_id="msg_016HxyUMAncysqX7dn1kWNRx",
    ),
    "ant_text_basic": Want(
        text="- Captain\n- Scoop",
        finish=(R.END_TURN, "end_turn"),
        usage=U(17, 10),
        message_id="msg_017A4s3HAsrqf5d2WvBmrpLr",
    ),
    "ant_text_stop_sequence": Want(
        text_starts='\ndef pelican():\n    return "A large waterbird',
        text_ends='with a long bill and a throat pouch for catching fish."\n',
        finish=(R.STOP_SEQUENCE, "stop_sequence"),
        usage=U(16, 28),
    ),
    "ant_text_then_tool_use": Want(
        text="I'll check the current weather in Paris for you.",
        calls=(("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", '{"location": "Paris"}'),),
        finish=(R.TOOL_USE, "tool_use"),
        usage=U(377, 65),
        message_id="msg_019Q1hrJbZG26Fb9BQhrkHEr",
    ),
    "ant_thinking_signature_text": Want(
        text_starts="Here are the basic steps for safely crossing the street:\n\n",
        text_ends="Always prioritize safety over speed when crossing streets.",
        thinking_starts="This is a straightforward question about pedestrian safety.",
        thinking_ends="This is basic safety information that could help prevent accidents.",
        signature_starts="EvMCCkYICxgCKkCHP2cSuEdcJK/0rF",
        finish=(R.END_TURN, "end_turn"),
        usage=U(43, 282),
    ),
    "ant_thinking_then_tool_use": Want(
        text="",
        thinking_starts="The user wants to know the temperature in Utrecht.",
        thinking_ends='I should use this tool with "Utrecht" as the city parameter.',
        signature_starts="EqsDCpQBCBAYAipALuXGgP6l1QabSD",
        calls=(("toolu_01TUGHRCfso8VSw9ekt21nAR", "get_temperature", '{"city": "Utrecht"}'),),
        finish=(R.TOOL_USE, "tool_use"),
        usage=U(597, 101),
    ),
    "ant_tool_use_only": Want(
        text="",
        calls=(
            (
                "toolu_018acGYLtfR52q9yDbWaEdQZ",
                "get_weather",
                '{"location": "San Francisco, CA", "units": "f"}',
            ),
        ),
        finish=(R.TOOL_USE, "tool_use"),
        usage=U(656, 74),
    ),
    "ant_web_search_server_tool_citations": Want(
        text_starts="Based on the search results, here's the current weather in San Francis",
        text_ends="with a Level 1 storm system bringing periods of rain this weekend.",
        calls=(),  # the server-side web search is not ours to run
        finish=(R.END_TURN, "end_turn"),
        usage=U(10423, 341),  # message_delta's cumulative input count replaces message_start's
        message_id="msg_01TRpkkgb2QsnyjsGSVdRtGr",
    ),
}


@dataclass(frozen=True)
class WantError:
    kind: LLMErrorKind
    status: int | None
    retry_after_s: float | None
    says: str
    retryable: bool


ERRORS: dict[str, WantError] = {
    "openai_chat/err_cerebras_429_retry_after_ms": WantError(
        LLMErrorKind.RATE_LIMIT, 429, 0.66, "Requests per second limit exceeded", True
    ),
    "openai_chat/err_groq_400_context_length": WantError(
        LLMErrorKind.CONTEXT_OVERFLOW, 400, None, "reduce the length of the messages", False
    ),
    "openai_chat/err_groq_429_rate_limit_retry_after": WantError(
        LLMErrorKind.RATE_LIMIT, 429, 7.0, "Please try again in 6.59s", True
    ),
    "openai_chat/err_mistral_400_context_length": WantError(
        LLMErrorKind.CONTEXT_OVERFLOW, 400, None, "131072 maximum context length", False
    ),
    "openai_chat/err_ollama_404_model_not_found": WantError(
        LLMErrorKind.NOT_FOUND, 404, None, 'model "not-found-model" not found', False
    ),
    "openai_chat/err_openai_400_context_length_exceeded": WantError(
        LLMErrorKind.CONTEXT_OVERFLOW, 400, None, "maximum context length is 128000 tokens", False
    ),
    "openai_chat/err_openai_401_invalid_api_key": WantError(
        LLMErrorKind.AUTH, 401, None, "Incorrect API key provided", False
    ),
    "openai_chat/err_openai_404_model_not_found": WantError(
        LLMErrorKind.NOT_FOUND, 404, None, "The model `gpt-5.2-proo` does not exist", False
    ),
    "openai_chat/err_openai_429_insufficient_quota": WantError(
        LLMErrorKind.QUOTA, 429, None, "You exceeded your current quota", False
    ),
    "openai_chat/err_openrouter_429_upstream_rate_limited": WantError(
        LLMErrorKind.RATE_LIMIT, 429, None, "temporarily rate-limited upstream", True
    ),
    "openai_chat/err_together_500_retry_after": WantError(
        LLMErrorKind.STATUS, 500, 1.0, "Internal server error", True
    ),
    "openai_chat/err_zai_429_overloaded_on_stream_request": WantError(
        LLMErrorKind.OVERLOADED, 429, None, "temporarily overloaded", True
    ),
    "anthropic_messages/err_anthropic_400_invalid_request_tool_result": WantError(
        LLMErrorKind.REQUEST_STRUCTURE, 400, None, "unexpected `tool_use_id` found", False
    ),
    "anthropic_messages/err_anthropic_400_prompt_too_long": WantError(
        LLMErrorKind.CONTEXT_OVERFLOW, 400, None, "prompt is too long: 200027 tokens", False
    ),
    "anthropic_messages/err_anthropic_401_invalid_x_api_key": WantError(
        LLMErrorKind.AUTH, 401, None, "invalid x-api-key", False
    ),
    "anthropic_messages/err_anthropic_404_not_found_model": WantError(
        LLMErrorKind.NOT_FOUND, 404, None, "model: claude-sonet-4-5", False
    ),
    "anthropic_messages/err_anthropic_429_rate_limit_retry_after": WantError(
        LLMErrorKind.RATE_LIMIT, 429, 4.0, "50,000 input tokens per minute", True
    ),
    "anthropic_messages/err_anthropic_429_rate_limit_x_should_retry": WantError(
        LLMErrorKind.RATE_LIMIT, 429, None, "20,000,000 prompt bytes per hour", True
    ),
}

MIDSTREAM_ERRORS: dict[str, WantError] = {
    # a clean EOF mid-answer: no finish_reason, no usage, no [DONE] (the text stops at "214")
    "openai_chat/kimi_k2_6_vllm_reasoning_eof_no_finish": WantError(
        LLMErrorKind.INCOMPLETE, None, None, "no finish reason and no [DONE]", True
    ),
    # event: error with {"error": {..., "code": "tool_use_failed", "status_code": 400}}
    "openai_chat/groq_midstream_error_event": WantError(
        LLMErrorKind.PROVIDER, 400, None, "Tool call validation failed", True
    ),
    # a chunk with a top-level "error": {"code": 400, "message": "Token limit reached"}
    "openai_chat/openrouter_midstream_error_sse_comments": WantError(
        LLMErrorKind.PROVIDER, 400, None, "Token limit reached", True
    ),
}


def serve(server: LocalServer, name: str, piece: int = 517) -> None:
    body, meta = fixture(name)
    server.replies.append(
        Reply(
            status=meta["http_status"],
            headers=dict(meta["response_headers"]),
            pieces=split(body, piece),
        )
    )


async def run(server: LocalServer, kind: str, key: str | None = None) -> Outcome:
    settings = ProviderSettings(
        kind="openai" if kind == "openai_chat" else "anthropic",
        model="recorded",
        api_key=key,
        base_url=f"{server.url}/v1" if kind == "openai_chat" else server.url,
    )
    provider = make_provider(settings)
    try:
        return await collect(
            provider.stream(LLMRequest(model="recorded", messages=(user_message("hi"),)))
        )
    finally:
        await provider.aclose()


def check(out: Outcome, want: Want) -> None:
    assert out.error is None, out.error
    if want.text is not None:
        assert out.text == want.text
    assert out.text.startswith(want.text_starts)
    assert out.text.endswith(want.text_ends)
    if want.thinking is not None:
        assert out.thinking == want.thinking
    assert out.thinking.startswith(want.thinking_starts)
    assert out.thinking.endswith(want.thinking_ends)
    if want.calls or want.finish in ((R.TOOL_USE, "tool_calls"), (R.TOOL_USE, "tool_use")):
        assert out.tool_calls == list(want.calls)
    assert out.finish is not None
    assert (out.finish.reason, out.finish.raw) == want.finish
    assert out.usage == want.usage
    if want.message_id is not None:
        assert out.message_id == want.message_id
    if want.signature_starts:
        assert len(out.signatures) == 1
        assert out.signatures[0].startswith(want.signature_starts)
    assert len(out.encrypted) == len(want.encrypted_starts)
    for data, start in zip(out.encrypted, want.encrypted_starts, strict=True):
        assert data.startswith(start)


def test_every_fixture_has_an_expectation() -> None:
    root = fixtures_root()
    recorded = {
        f"{p.parent.name}/{p.name.removesuffix('.meta.json')}" for p in root.glob("*/*.meta.json")
    }
    covered = (
        {f"openai_chat/{n}" for n in OPENAI_STREAMS}
        | {f"anthropic_messages/{n}" for n in ANTHROPIC_STREAMS}
        | set(ERRORS)
        | set(MIDSTREAM_ERRORS)
    )
    assert recorded == covered
    assert len(recorded) == 63


@pytest.mark.parametrize("name", sorted(OPENAI_STREAMS))
async def test_openai_recording_rebuilds_the_message(server: LocalServer, name: str) -> None:
    serve(server, f"openai_chat/{name}")
    check(await run(server, "openai_chat"), OPENAI_STREAMS[name])


@pytest.mark.parametrize("name", sorted(ANTHROPIC_STREAMS))
async def test_anthropic_recording_rebuilds_the_message(server: LocalServer, name: str) -> None:
    serve(server, f"anthropic_messages/{name}")
    check(await run(server, "anthropic_messages"), ANTHROPIC_STREAMS[name])


async def test_truncated_anthropic_tool_input_keeps_the_partial_arguments(
    server: LocalServer,
) -> None:
    serve(server, "anthropic_messages/ant_max_tokens_truncated_tool_input")
    out = await run(server, "anthropic_messages")
    [(call_id, name, arguments)] = out.tool_calls
    assert (call_id, name) == ("toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file")
    assert arguments.startswith('{"filename": "taxes.txt", "lines_of_text": [\n')
    with pytest.raises(ValueError):
        json.loads(arguments)  # cut off by max_tokens: the loop decides what to do with it


@pytest.mark.parametrize("name", sorted(ERRORS) + sorted(MIDSTREAM_ERRORS))
async def test_recorded_error_is_classified(server: LocalServer, name: str) -> None:
    want = ERRORS.get(name) or MIDSTREAM_ERRORS[name]
    serve(server, name)
    out = await run(server, name.split("/")[0])
    assert out.error is not None
    assert out.error.kind is want.kind
    assert out.error.status == want.status
    assert out.error.retry_after_s == pytest.approx(want.retry_after_s)
    assert want.says in out.error.message
    assert out.error.retryable is want.retryable
    assert out.error.model == "recorded"


async def test_key_echoed_by_the_server_is_redacted(server: LocalServer) -> None:
    # The recorded 401 quotes the key it was given: "Incorrect API key provided: mock-api-key."
    serve(server, "openai_chat/err_openai_401_invalid_api_key")
    out = await run(server, "openai_chat", key="mock-api-key")
    assert out.error is not None
    assert "mock-api-key" not in out.error.message
    assert "[redacted]" in out.error.message
