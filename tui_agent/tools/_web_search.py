"""`web_search`: a web search through the search service the person configured.

Offered only when `web.search_url` names one: a SearXNG instance, asked through its JSON API
(`GET {search_url}/search?q=…&format=json`; the instance must have `json` among its
`search.formats`). No third-party service is built in. The endpoint is the person's own choice,
so the private-address guard of `web_fetch` does not apply to it (a SearXNG on localhost is
the usual set-up); the pages it lists are read with `web_fetch`, guarded as usual. A search
asks like a shell command does, unless a `WebSearch` rule allows it.
"""

from __future__ import annotations

from typing import ClassVar

import httpx
from pydantic import Field

from tui_agent.tools._accesses import ToolAccesses
from tui_agent.tools._base import Tool, ToolArgs, ToolContext
from tui_agent.tools._web import WebTimeouts
from tui_agent.vocab import ToolFacts, ToolResult, error_result

MAX_RESULTS = 10


class WebSearchArgs(ToolArgs):
    query: str = Field(description="What to search the web for.")


class WebSearch(Tool[WebSearchArgs]):
    name: ClassVar[str] = "web_search"
    description: ClassVar[str] = (
        "Search the web; returns up to 10 results (title, URL, snippet). Read a result with "
        "web_fetch."
    )
    Args = WebSearchArgs
    facts = ToolFacts(kind="search", verb="Search the web for", primary_arg="query")

    def __init__(self, search_url: str, timeouts: WebTimeouts = WebTimeouts()) -> None:
        self._endpoint = search_url.rstrip("/") + "/search"
        self._timeouts = timeouts

    def accesses(self, args: WebSearchArgs) -> ToolAccesses:
        return ToolAccesses.none()

    def plan_safe(self, args: WebSearchArgs) -> bool:
        return True

    def describe(self, args: WebSearchArgs) -> str:
        return args.query

    async def check(self, args: WebSearchArgs) -> str | None:
        return None if args.query.strip() else "The query is empty."

    async def execute(self, args: WebSearchArgs, ctx: ToolContext) -> ToolResult:
        timeout = httpx.Timeout(self._timeouts.read_s, connect=self._timeouts.connect_s)
        try:
            async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
                response = await client.get(
                    self._endpoint, params={"q": args.query, "format": "json"}
                )
            response.raise_for_status()
            results = response.json().get("results", [])
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            return error_result(
                f"web_search: the search service at {self._endpoint} failed: "
                f"{type(exc).__name__}: {exc} (it must be a SearXNG with the json format on)"
            )
        lines = []
        for number, item in enumerate(results[:MAX_RESULTS], 1):
            if not isinstance(item, dict) or not isinstance(item.get("url"), str):
                continue
            title = str(item.get("title") or item["url"]).strip()
            snippet = " ".join(str(item.get("content") or "").split())
            lines.append(
                f"{number}. {title}\n   {item['url']}" + (f"\n   {snippet}" if snippet else "")
            )
        if not lines:
            return ToolResult(output=f"No results for {args.query!r}.")
        return ToolResult(output=f"Results for {args.query!r}:\n\n" + "\n".join(lines))
