"""The SDK's side of elicitation: `elicitation/create` requests turned into `ElicitRequest`s
(see `tui_agent.tools.elicitation`) and the answers back into `ElicitResult`s."""

from __future__ import annotations

from typing import Any

from tui_agent.tools.elicitation import Elicit, ElicitRequest, form_fields
from tui_agent.tools.mcp._auth import open_browser


def session_callback(server: str, elicit: Elicit) -> Any:
    """The SDK's `elicitation_callback` for one server, asking through `elicit`."""
    from mcp import types

    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            request = ElicitRequest(server, params.message, url=params.url)
        else:
            request = ElicitRequest(server, params.message, form_fields(params.requested_schema))
        answer = await elicit(request)
        if answer.action == "accept" and request.url is not None:
            await open_browser(request.url)  # no browser: the form showed the address
        content = dict(answer.content) if answer.action == "accept" and request.fields else None
        return types.ElicitResult(action=answer.action, content=content)

    return callback
