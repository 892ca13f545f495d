"""MCP prompts as slash commands and MCP resources as `@server:uri` mentions, in the prompt.

A server's prompt `review` on server `git` is the command `/mcp__git__review`, its arguments
given in order (`/mcp__git__review src/app.py style`) or by name (`focus=style`), quoted as a
shell would quote them; a required one missing is said, and nothing is sent. The server fills
the prompt in and the result is sent as if typed. A resource is mentioned as `@server:uri`
(completed with the workspace's paths); on sending, its contents go with the prompt as a file's
would, an image as an image.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from tui_agent.ui.commands import SlashCommand

if TYPE_CHECKING:  # the offers, mentions and drafts load with the loop or the first prompt
    from tui_agent.loop.mcp_offers import McpOffers, McpPromptInfo
    from tui_agent.session import Attachment
    from tui_agent.ui.app import TuiAgentApp
    from tui_agent.vocab import PromptDraft

COMPLETIONS = 20  # resources offered at once


def prompt_commands(offers: McpOffers) -> tuple[SlashCommand, ...]:
    return tuple(
        SlashCommand(
            f"mcp__{prompt.server}__{prompt.name}",
            " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments),
            prompt.description or f"MCP prompt from {prompt.server}",
            mcp_prompt=prompt,
        )
        for prompt in offers.prompts()
    )


def prompt_arguments(prompt: McpPromptInfo, typed: str) -> dict[str, str]:
    """The arguments as the server takes them; ValueError says what is wrong."""
    try:
        words = shlex.split(typed)
    except ValueError as error:
        raise ValueError(f"cannot read the arguments: {error}") from None
    names = [argument.name for argument in prompt.arguments]
    given: dict[str, str] = {}
    positional = iter(names)
    for word in words:
        name, equals, value = word.partition("=")
        if equals and name in names:
            given[name] = value
            continue
        name = next((n for n in positional if n not in given), "")
        if not name:
            raise ValueError(f"too many arguments (it takes {', '.join(names) or 'none'})")
        given[name] = word
    missing = [a.name for a in prompt.arguments if a.required and a.name not in given]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    return given


async def send_prompt(
    app: TuiAgentApp, prompt: McpPromptInfo, typed: str, *, steer: bool, draft: PromptDraft
) -> None:
    """Fill the prompt in on its server and send it; a problem is said instead."""
    from tui_agent.loop.mcp_offers import McpOfferError
    from tui_agent.vocab import PromptDraft

    command = f"/mcp__{prompt.server}__{prompt.name}"
    try:
        arguments = prompt_arguments(prompt, typed)
        text = await app.loop.mcp_offers().prompt(prompt.server, prompt.name, arguments)
    except (ValueError, McpOfferError) as error:
        app.vm.add_marker("warning", f"{command}: {error}; nothing was sent")
        app.prompt_input.load_draft(draft)
        return
    app.prompt.send(PromptDraft(text=text), steer=steer, typed=draft)


def resource_completions(offers: McpOffers, query: str) -> list[str]:
    """`server:uri` of the resources whose name or URI contains `query`."""
    wanted = query.lower()
    found = [
        f"{item.server}:{item.uri}"
        for item in offers.resources()
        if wanted in f"{item.server}:{item.uri}".lower() or wanted in item.name.lower()
    ]
    return found[:COMPLETIONS]


async def resource_attachments(offers: McpOffers, typed: str) -> tuple[list[Attachment], list[str]]:
    """The resources `typed` mentions as attachments, and what could not be read."""
    from tui_agent.session import Attachment, mentioned_paths
    from tui_agent.vocab import ImagePart

    known = {f"{item.server}:{item.uri}": item for item in offers.resources()}
    attachments: list[Attachment] = []
    problems: list[str] = []
    for mention in mentioned_paths(typed):
        item = known.get(mention)
        if item is None:
            continue
        result = await offers.read(item.server, item.uri)
        if result.is_error:
            problems.append(result.text)
            continue
        output = () if isinstance(result.output, str) else result.output
        images = [part for part in output if isinstance(part, ImagePart)]
        source = f"@{item.server}:{item.uri}"
        attachments.append(Attachment(source, result.text, image=images[0] if images else None))
    return attachments, problems
