"""What a server tells us unasked: that its tools, resources or prompts changed.

The SDK hands every server notification to one `message_handler`; ours turns the three
`list_changed` notifications into a call of `on_list_changed(kind)`, made before the handler's
first await so that whoever waits on the lists learns of the change as early as possible.
Everything else (progress is routed to the call it belongs to by the SDK, log messages, errors
of the transport, which the call that meets them reports) is left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from mcp.client.session import IncomingMessage, MessageHandlerFnT

ListKind = Literal["tools", "resources", "prompts"]


def list_changed_handler(
    on_list_changed: Callable[[ListKind], None],
) -> MessageHandlerFnT:
    from mcp.types import (
        PromptListChangedNotification,
        ResourceListChangedNotification,
        ToolListChangedNotification,
    )

    kinds: dict[type[object], ListKind] = {
        ToolListChangedNotification: "tools",
        ResourceListChangedNotification: "resources",
        PromptListChangedNotification: "prompts",
    }

    async def handle(message: IncomingMessage) -> None:
        kind = kinds.get(type(message))
        if kind is not None:
            on_list_changed(kind)

    return handle
