"""A local OpenAI-compatible Chat Completions server that replays scripted steps.

Real sockets on 127.0.0.1 (a thread per request), so the real command line and the real httpx
client can talk to it. Each POST to `/v1/chat/completions` takes the next step:

- `{"text": "..."}` streams the text in small chunks, then `finish_reason: stop`;
- `{"tool_calls": [{"name": ..., "arguments": {...}}], "text"?: ...}` streams the calls
  (arguments split across deltas) and `finish_reason: tool_calls`;
- `{"status": 429, "headers": {"Retry-After": "1"}, "body": {...}}` answers with an error;
- `{"empty": true}` streams a stop with no content at all;
- `{"text": "...", "cut": true}` streams the text, then closes: no finish reason, no `[DONE]`;
- `{"hang_s": 5, "text": ...}` waits before answering (for cancellation tests).

Every request body is kept in `requests` for assertions, its headers in `headers`; `times`
holds arrival times.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedOpenAIServer:
    def __init__(self, steps: list[dict[str, Any]]) -> None:
        self.steps = list(steps)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # each request's headers, names in lower case
        self.times: list[float] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ScriptedOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def next_step(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.times.append(time.monotonic())
            if not self.steps:
                return {"text": "(the scripted server has no more steps)"}
            return self.steps.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                step = server.next_step(body, {k.lower(): v for k, v in self.headers.items()})
                if step.get("hang_s"):
                    time.sleep(float(step["hang_s"]))
                if "status" in step:
                    self._error(step)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    for chunk in _chunks(
                        step, body.get("model", "test-model"), len(server.requests)
                    ):
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                    if not step.get("cut"):
                        self.wfile.write(b"data: [DONE]\n\n")
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

            def _error(self, step: dict[str, Any]) -> None:
                payload = json.dumps(step.get("body", {"error": {"message": "error"}})).encode()
                self.send_response(int(step["status"]))
                self.send_header("Content-Type", "application/json")
                for name, value in step.get("headers", {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(payload)
                self.close_connection = True

        return Handler


def _chunks(step: dict[str, Any], model: str, request_no: int) -> Iterator[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    if step.get("empty"):
        yield chunk({"role": "assistant", "content": ""}, "stop")
        return
    text = step.get("text", "")
    for start in range(0, len(text), 8):
        yield chunk({"content": text[start : start + 8]})
    if step.get("cut"):
        return
    calls = step.get("tool_calls", [])
    for index, call in enumerate(calls):
        arguments = json.dumps(call.get("arguments", {}))
        head = {
            "index": index,
            "id": call.get("id", f"call_{request_no}_{index}"),
            "type": "function",
            "function": {"name": call["name"], "arguments": arguments[:5]},
        }
        yield chunk({"tool_calls": [head]})
        for start in range(5, len(arguments), 7):
            part = {"index": index, "function": {"arguments": arguments[start : start + 7]}}
            yield chunk({"tool_calls": [part]})
    yield chunk({}, "tool_calls" if calls else "stop")
    usage = step.get("usage", {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120})
    yield {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [],
        "usage": usage,
    }


@contextmanager
def scripted_openai_server(steps: list[dict[str, Any]]) -> Iterator[ScriptedOpenAIServer]:
    server = ScriptedOpenAIServer(steps).start()
    try:
        yield server
    finally:
        server.stop()
