"""The gate between the client's bytes on stdin and the ACP SDK's reader: bounded, never stuck.

The SDK reads a line of any length, parses it with `json.loads` (which recurses once per level
of nesting) and only logs a line it cannot parse. So one endless line would take all memory,
1,100 nested brackets would end its reader with a `RecursionError` (after which nothing more is
read, not even the end of input), and a client that sent a bad line would wait for an answer
forever. Every line passes this gate first:

- a line longer than `MAX_LINE_BYTES` is dropped as it streams by, never held whole;
- a line nested deeper than `MAX_DEPTH` is refused before anything parses it;
- a line that is not JSON, or is JSON but not an object, is refused;

each refusal is answered with a JSON-RPC error (id null: a refused line's id cannot be read),
the next line is served as usual, and the end of input always reaches the SDK, so the agent
ends when the client goes.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from itertools import accumulate

# The largest lines a client sends on purpose are a prompt with embedded editor buffers and the
# answer to `fs/read_text_file` (a whole file, unsaved buffer included): 16 MiB holds a very
# large source file several times over, while asyncio's reader never holds more than twice its
# limit, so a flood costs at most some 32 MiB before it is dropped.
MAX_LINE_BYTES = 16 * 1024 * 1024
# ACP messages nest a handful of levels (params, a prompt's blocks, a resource, `_meta`); 128
# leaves room for any real `_meta` and stays far below Python's recursion limit (1,000) for the
# SDK's parse and validation and every copy or dump of the message after it.
MAX_DEPTH = 128
PARSE_ERROR, INVALID_REQUEST = -32700, -32600

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [{ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}.get(b, 0) for b in range(256)]


async def gate(
    source: asyncio.StreamReader, sink: asyncio.StreamReader, replies: asyncio.StreamWriter
) -> None:
    """Feed `sink` (the SDK's reader) each line of `source` that is one JSON object; answer any
    other line on `replies`. `source`'s limit must be `MAX_LINE_BYTES`."""
    try:
        async for line in _lines(source):
            if line is None:
                await _answer(replies, _TOO_LONG)
            elif not line.strip():
                continue
            elif (refusal := _refusal(line)) is not None:
                await _answer(replies, refusal)
            else:
                sink.feed_data(line if line.endswith(b"\n") else line + b"\n")
    except ConnectionError:
        pass  # the client closed our stdout: nobody is left to answer, so end as at EOF
    finally:
        sink.feed_eof()


async def _lines(source: asyncio.StreamReader) -> AsyncIterator[bytes | None]:
    """Each line of `source`, or None in place of one longer than its limit (dropped)."""
    dropping = False
    while True:
        try:
            line = await source.readuntil(b"\n")
        except asyncio.LimitOverrunError as over:
            # Let go of what the reader holds of the long line; its rest is read and dropped next.
            await source.readexactly(over.consumed)
            dropping = True
            continue
        except asyncio.IncompleteReadError as end:  # the end of input; a last line may lack \n
            if dropping or end.partial:
                yield None if dropping else end.partial
            return
        yield None if dropping else line
        dropping = False


def _refusal(line: bytes) -> bytes | None:
    """The JSON-RPC error that answers `line`, or None when it is one JSON object."""
    if nesting(line) > MAX_DEPTH:
        return _error(PARSE_ERROR, f"Parse error: JSON nested deeper than {MAX_DEPTH} levels")
    try:
        message = json.loads(line)
    except ValueError:
        return _error(PARSE_ERROR, "Parse error: a message must be one JSON object a line")
    if not isinstance(message, dict):
        return _error(INVALID_REQUEST, "Invalid request: a message must be a JSON object")
    return None


def nesting(line: bytes) -> int:
    """How deep the arrays and objects of JSON text nest, found without recursion: strings are
    cut out, then the brackets left are counted (an unclosed string only makes a wrong answer
    for text that is not JSON anyway)."""
    brackets = _STRING.sub(b"", line).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


async def _answer(replies: asyncio.StreamWriter, refusal: bytes) -> None:
    replies.write(refusal)
    await replies.drain()


def _error(code: int, message: str) -> bytes:
    reply = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return json.dumps(reply).encode() + b"\n"


_TOO_LONG = _error(PARSE_ERROR, f"Parse error: over {MAX_LINE_BYTES // 1024**2} MiB, dropped")
