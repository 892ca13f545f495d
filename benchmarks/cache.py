"""Prompt-cache benchmark: how much of a long turn's input a provider's prefix cache could serve.

Run: `.venv/bin/python benchmarks/cache.py`. Prints tables; nothing is asserted.

A scripted 30-step turn (tools read a 3 KB file, one or two calls a step, a reminder at step 5,
a steer at step 10, a compaction after step 18, a text answer at step 30) runs through the real
loop and the real HTTP providers against a local server, in both wire formats
(`tests/support/cache_session.py`, the session the prefix-stability test checks). For every
request the server saw, the part a prefix cache could serve is its longest common prefix with
the previous request of the same conversation (tool table, system prompt, then messages, as the
provider reads them; Anthropic's `cache_control` marks left out), and the share is the sum of
those prefixes over all input. Tokens are the loop's own estimate (4 characters a token); the
share is a ratio, so the estimate cancels out. Target: >= 90 %.

Money: the same tokens priced with `genai-prices` (its bundled table, read offline) at a real
model's published prices: Claude Sonnet 4.5 for the Anthropic format (the uncached tail of each
request is billed as a cache write, as the breakpoints make it), GPT-5 for the OpenAI format
(uncached input at the input price, no write fee). Providers cache only prompts of 1024 tokens
or more, in blocks (OpenAI: 128 tokens); both are ignored, so "with caching" is a lower bound.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from genai_prices import Usage, calc_price  # noqa: E402

from tests.support.cache_session import Captured, Wire, run_session  # noqa: E402
from tui_agent.context import CHARS_PER_TOKEN  # noqa: E402

STEPS = 30
COMPACT_AFTER = 18
OUTPUT_TOKENS = 20  # what the scripted model reports per reply
MODELS: dict[Wire, tuple[str, str]] = {
    "anthropic": ("anthropic", "claude-sonnet-4-5"),
    "openai": ("openai", "gpt-5"),
}


@dataclass(frozen=True)
class Row:
    number: int
    kind: str
    tokens: int
    cached: int


def _tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


def _common(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    low, high = 0, limit
    while low < high:  # the longest common prefix, by bisection on slices
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def rows(captured: list[Captured]) -> list[Row]:
    out: list[Row] = []
    previous: dict[str, str] = {}  # the conversation's last prompt, and the summariser's
    for number, request in enumerate(captured, 1):
        prompt = request.prompt
        shared = _common(previous.get(request.kind, ""), prompt)
        previous[request.kind] = prompt
        out.append(Row(number, request.kind, _tokens(len(prompt)), _tokens(shared)))
    return out


def _price(wire: Wire, table: list[Row], *, cached: bool) -> Decimal:
    provider, model = MODELS[wire]
    total = sum(row.tokens for row in table)
    read = sum(row.cached for row in table) if cached else 0
    write = total - read if cached and wire == "anthropic" else 0
    usage = Usage(
        input_tokens=total,
        cache_read_tokens=read,
        cache_write_tokens=write,
        output_tokens=OUTPUT_TOKENS * len(table),
    )
    return calc_price(usage, model_ref=model, provider_id=provider).total_price


def _costs(wire: Wire, table: list[Row]) -> tuple[str, ...]:
    total = sum(row.tokens for row in table)
    cached = sum(row.cached for row in table)
    without, with_cache = _price(wire, table, cached=False), _price(wire, table, cached=True)
    return (
        f"{total:,}",
        f"{cached:,}",
        f"{cached / total:.1%}",
        f"${without:.4f}",
        f"${with_cache:.4f}",
    )


def _print(lines: list[tuple[str, ...]]) -> None:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    for line in lines:
        print("  ".join(cell.rjust(width) for cell, width in zip(line, widths, strict=True)))


async def main() -> None:
    summary: list[tuple[str, ...]] = []
    for scenario, compact_after in (("plain", None), ("compaction", COMPACT_AFTER)):
        tables: dict[Wire, list[Row]] = {}
        for wire in MODELS:
            with tempfile.TemporaryDirectory() as folder:
                captured = await run_session(
                    wire, Path(folder), steps=STEPS, compact_after=compact_after
                )
            tables[wire] = rows(captured)
            summary.append((scenario, wire, MODELS[wire][1], *_costs(wire, tables[wire])))
        title = "" if compact_after is None else f", compacted after step {compact_after}"
        print(f"\n{STEPS}-step turn{title}: input tokens per request, and the cacheable part")
        columns = [f"{wire} {column}" for wire in MODELS for column in ("in", "cached")]
        lines: list[tuple[str, ...]] = [("#", "request", *columns)]
        for number, parts in enumerate(zip(*tables.values(), strict=True), 1):
            cells = [str(number), parts[0].kind]
            for row in parts:
                cells += [f"{row.tokens:,}", f"{row.cached:,} ({row.cached / row.tokens:.0%})"]
            lines.append(tuple(cells))
        _print(lines)
    print(f"\nSummary (load {os.getloadavg()[0]:.1f}; target: share >= 90 %):")
    head = ("turn", "wire", "priced as", "input tok", "cacheable", "share", "no cache", "cached")
    _print([head, *summary])


if __name__ == "__main__":
    asyncio.run(main())
