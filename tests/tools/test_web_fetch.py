"""`web_fetch` against a real HTTP server on loopback: HTML as Markdown, text and JSON as they
are, redirects bounded and each hop judged, bodies cut at 5 MB, slow servers timed out, private
addresses refused (resolved names included, the connection pinned to the checked address),
rules that allow a domain, and the session's cache.

The server listens on 127.0.0.1, which the guard refuses: the tests reach it through the
guard's `exempt` seam (that one address only), so every other address is still judged by the
rule, and the rule itself is tested on its own below."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.llm.server import LocalServer, Recorded, Reply
from tui_agent.session import parse_config
from tui_agent.session._open import web_tools
from tui_agent.tools import AddressGuard, Approvals, WebFetch, WebSearch, WebTimeouts, Workspace
from tui_agent.tools._base import ToolContext
from tui_agent.tools._web import MAX_BYTES, WebFetchArgs, _markdown
from tui_agent.tools._web_guard import kind_of
from tui_agent.tools._web_search import WebSearchArgs
from tui_agent.vocab import AbortSignal, ToolResult

PAGES = Path(__file__).parent / "web_pages"
LOOPBACK = ipaddress.ip_address("127.0.0.1")


@pytest.fixture
async def server() -> AsyncIterator[LocalServer]:
    local = LocalServer()
    await local.start()
    yield local
    await local.stop()


def page(body: bytes | str, content_type: str = "text/html; charset=utf-8", **kw: object) -> Reply:
    data = body.encode() if isinstance(body, str) else body
    return Reply(headers={"content-type": content_type}, pieces=[data], chunked=False, **kw)  # type: ignore[arg-type]


def redirect(to: str, status: int = 302) -> Reply:
    return Reply(status=status, headers={"location": to}, chunked=False)


def names(table: dict[str, str]) -> object:
    async def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise OSError(-2, "Name or service not known")
        return table[host].split()

    return resolve


def fetcher(hosts: dict[str, str] | None = None, timeouts: WebTimeouts = WebTimeouts()) -> WebFetch:
    """A web_fetch whose guard lets the test server's address through, and resolves `hosts`."""
    guard = AddressGuard(
        exempt=frozenset({LOOPBACK}),
        resolver=names(hosts or {"docs.example": "127.0.0.1"}),  # type: ignore[arg-type]
    )
    return WebFetch(guard, timeouts)


async def run(tool: WebFetch, url: str, prompt: str | None = None) -> ToolResult:
    args = WebFetchArgs(url=url, prompt=prompt)
    problem = await tool.check(args)
    assert problem is None, problem
    ctx = ToolContext(
        signal=AbortSignal(),
        on_update=lambda update: None,
        detach=lambda ack: None,
        workspace=Workspace(Path.cwd()),
        call_id="c1",
    )
    return await tool.execute(args, ctx)


def serve(server: LocalServer, routes: dict[str, Reply]) -> None:
    def answer(request: Recorded) -> Reply:
        return routes.get(request.path, Reply(status=404, chunked=False))

    server.answer = answer


async def test_html_becomes_markdown_with_absolute_links(server: LocalServer) -> None:
    serve(server, {"/docs/config.html": page((PAGES / "docs.html").read_text())})
    url = f"http://docs.example:{server.port}/docs/config.html"
    result = await run(fetcher(), url, prompt="the default timeout")
    assert not result.is_error
    text = result.text
    assert text.startswith(f"{url} (HTTP 200, text/html; charset=utf-8)\nLooking for: the default")
    assert "# Configuration" in text
    assert "| `timeout`   | float | 30.0" in text
    assert f"(http://docs.example:{server.port}/docs/api.html#widgetry.Settings)" in text
    assert "dataLayer" not in text and "font-family" not in text  # script and style dropped
    (request,) = server.requests
    # Connected to the checked address; the name went in Host, never to a second lookup.
    assert request.headers["host"] == f"docs.example:{server.port}"


@pytest.mark.parametrize(
    ("content_type", "body"),
    [("text/plain", "line one\nline two\n"), ("application/json", '{"a": [1, 2]}')],
)
async def test_text_and_json_come_back_as_they_are(
    server: LocalServer, content_type: str, body: str
) -> None:
    serve(server, {"/x": page(body, content_type)})
    result = await run(fetcher(), f"http://docs.example:{server.port}/x")
    assert result.text.endswith("\n\n" + body)


async def test_other_types_are_refused_with_a_message(server: LocalServer) -> None:
    serve(server, {"/logo.png": page(b"\x89PNG\r\n", "image/png")})
    result = await run(fetcher(), f"http://docs.example:{server.port}/logo.png")
    assert result.is_error
    assert "the content is image/png; web_fetch reads HTML, plain text and JSON" in result.text


async def test_redirects_are_followed_and_bounded(server: LocalServer) -> None:
    routes = {f"/r{n}": redirect(f"/r{n + 1}") for n in range(10)}
    routes["/r3"] = page("<p>arrived</p>")
    serve(server, routes)
    base = f"http://docs.example:{server.port}"
    arrived = await run(fetcher(), f"{base}/r0")
    assert f"(redirected to {base}/r3)" in arrived.text and "arrived" in arrived.text
    routes["/r3"] = redirect("/r4")
    server.requests.clear()
    endless = await run(fetcher(), f"{base}/r0")
    assert endless.is_error and "more than 5 redirects" in endless.text
    assert len(server.requests) == 6  # the URL and five hops, not one more


@pytest.mark.parametrize(
    ("location", "why"),
    [
        ("http://10.0.0.7/admin", "10.0.0.7 is a private address"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"),
        ("http://[::ffff:192.168.1.1]/", "192.168.1.1 is a private address"),
        ("http://intranet.example/", "intranet.example resolves to 10.1.2.3, a private address"),
    ],
)
async def test_a_redirect_into_a_private_network_is_refused(
    server: LocalServer, location: str, why: str
) -> None:
    serve(server, {"/go": redirect(location)})
    tool = fetcher({"docs.example": "127.0.0.1", "intranet.example": "10.1.2.3"})
    result = await run(tool, f"http://docs.example:{server.port}/go")
    assert result.is_error and why in result.text
    assert "web.allow_private = true" in result.text
    assert len(server.requests) == 1


async def test_a_name_with_any_private_address_is_refused(server: LocalServer) -> None:
    serve(server, {"/": page("<p>hi</p>")})
    tool = fetcher({"mixed.example": "127.0.0.1 10.9.8.7"})
    result = await run(tool, f"http://mixed.example:{server.port}/")
    assert result.is_error and "mixed.example resolves to 10.9.8.7, a private" in result.text
    assert server.requests == []


async def test_loopback_is_refused_by_the_rule_and_allowed_by_allow_private(
    server: LocalServer,
) -> None:
    serve(server, {"/": page("<p>local</p>")})
    refused = await run(WebFetch(AddressGuard()), f"http://127.0.0.1:{server.port}/")
    assert refused.is_error and "127.0.0.1 is a loopback address" in refused.text
    assert server.requests == []
    allowed = await run(
        WebFetch(AddressGuard(allow_private=True)), f"http://127.0.0.1:{server.port}/"
    )
    assert not allowed.is_error and "local" in allowed.text


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("10.1.1.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.0.1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("fd12:3456::1", "private"),
        ("100.64.0.1", "shared (CGNAT)"),
        ("::ffff:127.0.0.1", "loopback"),
        ("224.0.0.1", "multicast"),
        ("192.0.2.10", "private"),
        ("93.184.215.14", None),
        ("2606:4700:4700::1111", None),
    ],
)
def test_the_address_rule(address: str, kind: str | None) -> None:
    assert kind_of(ipaddress.ip_address(address)) == kind


async def test_a_huge_body_is_cut_at_5_mb(server: LocalServer) -> None:
    chunk = b"x" * (1024 * 1024)
    serve(
        server,
        {"/big.txt": Reply(headers={"content-type": "text/plain"}, pieces=[chunk] * 8)},
    )
    result = await run(fetcher(), f"http://docs.example:{server.port}/big.txt")
    assert not result.is_error
    body = result.text.split("\n\n", 1)[1]
    assert body.startswith("x" * MAX_BYTES + "\n\n") and "x" * (MAX_BYTES + 1) not in body
    assert result.text.endswith("[cut: the body is larger than 5 MB; only its first part was read]")


async def test_a_slow_body_times_out(server: LocalServer) -> None:
    slow = Reply(
        headers={"content-type": "text/html"}, pieces=[b"<p>a</p>", b"<p>b</p>"], piece_delay_s=30
    )
    serve(server, {"/slow": slow})
    tool = fetcher(timeouts=WebTimeouts(connect_s=5, read_s=0.2, total_s=30))
    result = await run(tool, f"http://docs.example:{server.port}/slow")
    assert result.is_error and "timed out (ReadTimeout)" in result.text


async def test_the_same_url_is_answered_from_the_sessions_cache(server: LocalServer) -> None:
    serve(server, {"/p": page("<h1>Once</h1>")})
    tool = fetcher()
    url = f"http://docs.example:{server.port}/p"
    first = await run(tool, url)
    again = await run(tool, url)
    assert len(server.requests) == 1
    assert again.text.startswith(f"{url} (from this session's cache)")
    assert first.text.split("\n\n", 1)[1] == again.text.split("\n\n", 1)[1]


async def test_not_an_http_url_is_refused_before_anyone_is_asked() -> None:
    args = WebFetchArgs(url="file:///etc/passwd")
    assert await WebFetch().check(args) == "'file:///etc/passwd' is not an http:// or https:// URL."


def test_a_webfetch_domain_rule_allows_that_host_without_asking() -> None:
    tool = WebFetch()
    approvals = Approvals("ask", ["WebFetch(domain:docs.python.org)", "WebFetch(domain:*.rs)"])
    allowed = ("https://docs.python.org/3/library/", "https://docs.rs/httpx", "http://a.b.rs/")
    for url in allowed:
        assert approvals.allows(tool, WebFetchArgs(url=url)), url
    other = WebFetchArgs(url="https://evil.example/?q=docs.python.org")
    assert not approvals.allows(tool, other)  # asks, like a shell command
    assert approvals.ruleset.suggestions(tool, other) == ("WebFetch(domain:evil.example)",)
    assert not Approvals("auto-edit").allows(tool, other)
    assert Approvals("yolo").allows(tool, other)


def test_web_tools_follow_the_config() -> None:
    plain = parse_config("", Path("config.toml"))
    assert [t.name for t in web_tools(plain)] == ["web_fetch"]
    configured = parse_config(
        '[web]\nallow_private = true\nsearch_url = "http://127.0.0.1:8888"\n', Path("c.toml")
    )
    assert configured.web.allow_private
    assert [t.name for t in web_tools(configured)] == ["web_fetch", "web_search"]


async def test_web_search_asks_the_configured_searxng(server: LocalServer) -> None:
    results = {
        "results": [
            {"url": "https://a.example/1", "title": "First", "content": "the  first\nhit"},
            {"url": "https://b.example/2", "title": "Second"},
        ]
    }
    serve(server, {})
    server.answer = lambda request: page(json.dumps(results), "application/json")
    tool = WebSearch(server.url)
    ctx = ToolContext(
        signal=AbortSignal(),
        on_update=lambda update: None,
        detach=lambda ack: None,
        workspace=Workspace(Path.cwd()),
        call_id="s1",
    )
    result = await tool.execute(WebSearchArgs(query="tram line"), ctx)
    (request,) = server.requests
    assert request.path == "/search?q=tram+line&format=json"
    assert result.text == (
        "Results for 'tram line':\n\n"
        "1. First\n   https://a.example/1\n   the first hit\n"
        "2. Second\n   https://b.example/2"
    )


@pytest.mark.parametrize(
    ("name", "kept"),
    [
        ("docs.html", ["# Configuration", "| `cache_dir` | path", "```console\n$ widgetry serve"]),
        ("blog.html", ["# Why we moved", "```sql\nUPDATE jobs", "> A queue that can forget"]),
        ("news.html", ["# City council approves", "| Utilities relocation | 2027", "€412"]),
    ],
)
def test_the_sample_pages_read_as_markdown_without_script_or_style(
    name: str, kept: list[str]
) -> None:
    text = _markdown((PAGES / name).read_text(), "https://site.example/page")
    for expected in kept:
        assert expected in text.replace("  ", " "), expected
    for dropped in ("<script", "function(", "font-family", "dataLayer", "max-width"):
        assert dropped not in text
