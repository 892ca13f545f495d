"""`/context`: what fills the context window, as a bar with a legend and per-item tokens.

It pictures the request the next step would send (`LoopApi.next_request`): the system prompt,
the project's memory files inside it (AGENTS.md, CLAUDE.md), the built-in tools' schemas, the
MCP servers' tool schemas, the conversation, the files and command output attached to prompts,
and what is left free. No provider ships a tokenizer that works offline for every model, so the
counts are the loop's own estimate (four characters a token, as compaction counts), said so on
the first line beside the provider's measure of the last request.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_agent.context import estimate_tokens, message_tokens
from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop.api import LoopApi
from tui_agent.session import ProjectInstructions, attachments_of, load_instructions
from tui_agent.vocab import LLMRequest, Message, TextPart

BAR_CELLS = 50
MCP_PREFIX = "mcp__"


@dataclass(frozen=True)
class Item:
    name: str
    glyph: str
    tokens: int
    parts: tuple[tuple[str, int], ...] = ()  # (what, tokens), for the legend


def context_items(request: LLMRequest, memory: Sequence[ProjectInstructions]) -> list[Item]:
    """The request's parts, in the order the provider reads them."""
    files = tuple(
        (found.name, _tokens(found.text)) for found in memory if found.text in request.system
    )
    mcp = [spec for spec in request.tools if spec.name.startswith(MCP_PREFIX)]
    builtin = [spec for spec in request.tools if not spec.name.startswith(MCP_PREFIX)]
    history = attached = 0
    sources: dict[str, int] = {}
    for message in request.messages:
        total = message_tokens(message)
        if message.role == "user":
            _, attachments = attachments_of(message.text)
            for attachment in attachments:
                size = _tokens(attachment.text)
                sources[attachment.source] = sources.get(attachment.source, 0) + size
                attached += size
                total -= size
        history += max(total, 0)
    memory_tokens = sum(size for _, size in files)
    servers: dict[str, int] = {}
    for spec in mcp:
        server = spec.name.removeprefix(MCP_PREFIX).split("__", 1)[0]
        servers[server] = servers.get(server, 0) + estimate_tokens((), tools=(spec,))
    return [
        Item("System prompt", "█", max(_tokens(request.system) - memory_tokens, 0)),
        Item("Memory files", "▓", memory_tokens, files),
        Item("Tools", "▒", estimate_tokens((), tools=builtin), ((f"{len(builtin)} tools", 0),)),
        Item("MCP tools", "░", sum(servers.values()), tuple(servers.items())),
        Item("Messages", "■", history, ((f"{len(request.messages)} messages", 0),)),
        Item("Attachments", "◆", attached, tuple(sources.items())),
    ]


def context_of(loop: LoopApi, measured: int) -> str:
    """`/context` for a loop: its next request; `measured` is what the provider counted last."""
    return context_text(
        loop.next_request(),
        load_instructions(loop.info.workspace),
        window=loop.info.context_window,
        measured=measured,
    )


def context_text(
    request: LLMRequest | None,
    memory: Sequence[ProjectInstructions],
    *,
    window: int,
    measured: int,
) -> str:
    if request is None:
        return "Context: the session is still opening."
    items = context_items(request, memory)
    used = sum(item.tokens for item in items)
    free = max(window - used, 0)
    scale = max(window, used, 1)
    bar = "".join(item.glyph * _cells(item.tokens, scale) for item in items)
    bar += "·" * max(BAR_CELLS - len(bar), 0)
    share = f" ({100 * used / window:.0f}%)" if window else ""
    lines = [
        f"Context of {request.model}: ~{_k(used)} of {_k(window)} tokens{share}",
        "estimated at 4 characters a token; "
        + (f"the last request measured {_k(measured)}" if measured else "nothing measured yet"),
        bar[:BAR_CELLS],
    ]
    for item in items:
        lines.append(_legend(item.glyph, item.name, item.tokens, window))
        for what, size in item.parts:
            lines.append(f"    {what}" + (f"  {_k(size)}" if size else ""))
    lines.append(_legend("·", "Free", free, window))
    return "\n".join(lines)


def _legend(glyph: str, name: str, tokens: int, window: int) -> str:
    share = f"{100 * tokens / window:>6.1f}%" if window else ""
    return f"{glyph} {name:<15}{_k(tokens):>8}{share}"


def _cells(tokens: int, scale: int) -> int:
    if not tokens:
        return 0
    return max(1, round(BAR_CELLS * tokens / scale))


def _tokens(text: str) -> int:
    return message_tokens(Message(role="user", content=(TextPart(text=text),)))


def _k(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)
