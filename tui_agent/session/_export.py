"""Exporting a session: its log as Markdown, one self-contained HTML page, or JSON lines.

The export shows what the transcript showed, so it is rendered from the same replay of the log
(`loop.replay`): the prompts with what went with them (`!command` output, `@file` contents), the
answers and their thinking (Markdown, rendered in HTML by markdown-it-py with raw HTML and images
off, so the page stays one safe self-contained file), the images a prompt carried (embedded in
the HTML page as data URLs; Markdown names them), every tool call with its arguments, its
status and its result (an edit's diff as a diff block), the markers (retries, interrupted, turn
failed, context compacted) and the token usage. JSON lines are the replayed loop events, in the
words `--output-format jsonl` uses.
"""

from __future__ import annotations

import html
import json
import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Literal

from markdown_it import MarkdownIt

from tui_agent.context import Notification, Prompt, Record, SessionMeta, Steer, read_log
from tui_agent.lazy_dataclass import dataclass
from tui_agent.loop import events as ev
from tui_agent.loop.costs import CostLine
from tui_agent.loop.replay import replay
from tui_agent.session._attachments import Attachment, attachments_of
from tui_agent.session._branches import on_branch
from tui_agent.session._costs import logged_cost
from tui_agent.session._images import IMAGE_TYPES
from tui_agent.session._sessions import Session
from tui_agent.usage import usd
from tui_agent.vocab import ImagePart, Message, ToolStatus

ExportFormat = Literal["md", "html", "jsonl"]
FORMATS: tuple[ExportFormat, ...] = ("md", "html", "jsonl")
SUFFIX: dict[ExportFormat, str] = {"md": ".md", "html": ".html", "jsonl": ".jsonl"}

# Per `ToolStatus` (None: the log has no result for the call), as the app's rows show it.
_GLYPH = {"done": "✓", "failed": "✗", "denied": "⊗", "aborted": "⊘", None: "…"}
_STATE = {
    "done": "done",
    "failed": "failed",
    "denied": "denied",
    "aborted": "stopped",
    None: "no result",
}


# ---------------------------------------------------------------- the parts, in order


# CommonMark and tables; raw HTML is shown as text and images as links, so nothing in a
# session can run script in the page or make it fetch anything.
_RENDER = (
    MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"]).disable("image")
)


@dataclass
class _Said:
    who: Literal["prompt", "steer", "notification"]
    words: str
    attachments: list[Attachment]
    images: tuple[ImagePart, ...] = ()

    @classmethod
    def of(
        cls,
        who: Literal["prompt", "steer", "notification"],
        text: str,
        shown: set[str],
        images: dict[str, list[tuple[ImagePart, ...]]],
    ) -> _Said:
        """`shown`: the outputs of the `!command` rows already in the export; an attachment
        that repeats one keeps only its name (its text is emptied). `images`: the images of
        the logged messages by their text, taken in order."""
        words, attachments = attachments_of(text)
        kept = [
            replace(a, text="") if a.source.startswith("!") and a.text.rstrip() in shown else a
            for a in attachments
        ]
        carried = images.get(text)
        return cls(who, words, kept, carried.pop(0) if carried else ())


def _images_by_text(records: list[Record]) -> dict[str, list[tuple[ImagePart, ...]]]:
    """The images of the person's messages in the log, by the message's text (the replayed
    events carry only the text), in log order."""
    found: dict[str, list[tuple[ImagePart, ...]]] = {}
    for record in records:
        message: Message | None = None
        if isinstance(record, Prompt):
            message = record.message
        elif isinstance(record, (Steer, Notification)):
            message = record.entry.message
        images = (
            () if message is None else tuple(p for p in message.content if isinstance(p, ImagePart))
        )
        if message is not None and images:
            found.setdefault(message.text, []).append(images)
    return found


@dataclass
class _Answer:
    thinking: str
    text: str


@dataclass
class _Call:
    name: str
    arguments: str
    status: ToolStatus | None = None
    output: str = ""
    diff: str | None = None
    child: list[_Part] | None = None  # a `task` call: what its sub-agent said and did

    @property
    def command(self) -> str | None:
        """A `!command` the user ran (a row named `!`, as the app draws it), else None."""
        if self.name != "!":
            return None
        try:
            command = json.loads(self.arguments).get("command")
        except (ValueError, AttributeError):
            return None
        return command if isinstance(command, str) else None

    @property
    def title(self) -> str:
        command = self.command
        return self.name if command is None else f"$ {command}"


@dataclass
class _Marker:
    kind: str
    text: str


_Part = _Said | _Answer | _Call | _Marker


@dataclass
class _Session:
    title: str
    facts: list[tuple[str, str]]
    parts: list[_Part]
    cost: CostLine  # its tokens (sub-agents' included) and what they cost
    context_tokens: int


def _collect(
    records: list[Record], tasks: Path | None = None, chain: tuple[str, ...] = ()
) -> tuple[_Session, tuple[ev.LoopEvent, ...]]:
    meta = next((r for r in records if isinstance(r, SessionMeta)), None)
    replayed = replay(records, context_window=0)
    events, cost = logged_cost(records, replayed.events)
    parts: list[_Part] = []
    calls: dict[str, _Call] = {}
    queued: dict[str, Literal["steer", "notification"]] = {}
    shown: set[str] = set()  # the outputs of `!command` rows, which prompts then carry
    images = _images_by_text(records)
    for event in events:
        match event:
            case ev.TurnStarted():
                parts.extend(_Said.of("prompt", text, shown, images) for text in event.texts)
            case ev.NotificationQueued():
                queued[event.text] = "steer" if event.source == "steer" else "notification"
            case ev.Drained():
                parts.extend(
                    _Said.of(queued.pop(t, "steer"), t, shown, images) for t in event.texts
                )
            case ev.StepCompleted():
                if event.text.strip() or event.thinking.strip():
                    parts.append(_Answer(event.thinking.strip(), event.text.strip()))
            case ev.ToolStarted():
                calls[event.id] = _Call(event.name, event.arguments)
                parts.append(calls[event.id])
            case ev.ToolFinished():
                call = calls.get(event.id)
                if call is not None:
                    call.status = event.status
                    call.output = event.output
                    diff = (event.display or {}).get("diff")
                    call.diff = diff if isinstance(diff, str) else None
                    call.child = _subagent(event.display, tasks, chain)
                    if call.command is not None:
                        shown.add(call.output.rstrip())
            case ev.TurnFinished():
                marker = event.result.marker()
                if marker is not None:
                    parts.append(_Marker(*marker))
            case ev.Retrying():
                parts.append(_Marker("retry", _retried(event)))
            case ev.Compacted():
                text = f"context compacted: {event.tokens_before} → {event.tokens_after} tokens"
                parts.append(_Marker("compacted", text))
            case ev.Notice():
                parts.append(_Marker(event.level, event.text))
            case _:
                pass
    facts: list[tuple[str, str]] = []
    if meta is not None:
        facts = [
            ("workspace", meta.workspace),
            ("model", f"{meta.provider or '?'}/{meta.model or '?'}"),
            ("started", time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(meta.ts))),
        ]
    title = f"Session {meta.session_id}" if meta is not None else "Session"
    session = _Session(title, facts, parts, cost, replayed.context_tokens)
    return session, events


def _subagent(
    display: dict[str, object] | None, tasks: Path | None, chain: tuple[str, ...]
) -> list[_Part] | None:
    """The parts of the sub-agent a `task` call ran, from its own log beside the session's.
    `chain` names the sub-agent logs being shown around this call: a log that names one of
    them (itself, or an agent above it: a damaged or crafted log) is a cycle, said, not followed."""
    link = (display or {}).get("subagent")
    if tasks is None or not isinstance(link, dict) or not isinstance(link.get("log"), str):
        return None
    name = Path(link["log"]).name
    if name in chain:
        text = f"sub-agent log tasks/{name} is already shown above (the logs form a cycle)"
        return [_Marker("warning", text)]
    path = tasks / name
    return _collect(read_log(path), tasks, (*chain, name))[0].parts if path.is_file() else None


def _retried(event: ev.Retrying) -> str:
    head = f"HTTP {event.status}" if event.status is not None else event.error_code
    lines = event.message.strip().splitlines()
    why = f"{head} · {lines[0]}" if lines else head
    return f"⟳ {why}: retried (attempt {event.attempt}/{event.max_attempts})"


def _attached(attachment: Attachment) -> str:
    """What went with a prompt, named as the transcript's chip names it."""
    if not attachment.source.startswith("!"):
        return f"{attachment.source} (attached)"
    where = "" if attachment.text else ", shown above,"
    return f"$ {attachment.source[1:]} (its output{where} went with the prompt)"


def _usage_line(session: _Session) -> str:
    usage = session.cost.usage
    line = (
        f"{usage.input} input tokens ({usage.input_cache_read} read from the cache, "
        f"{usage.input_cache_creation} written to it), "
    )
    line += f"{usage.output} output tokens; {session.context_tokens} in context at the end"
    return f"{line}; cost {usd(session.cost.cost_usd)}"


def _pretty(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments


_BACKTICK_RUNS = re.compile("`+")


def _fence(text: str, lang: str = "") -> str:
    """A fenced block whose fence is longer than any backtick run inside the text."""
    ticks = "`" * max(3, _longest_backticks(text) + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def _longest_backticks(text: str) -> int:
    # Found by the regex engine: a Python loop over each character took most of exporting a
    # day's session (4.7 MB of Markdown, 6 s; `benchmarks/long_day.py`). Most tool outputs
    # have no backtick at all: the substring test answers those at once.
    if "`" not in text:
        return 0
    return max(map(len, _BACKTICK_RUNS.findall(text)), default=0)


# ---------------------------------------------------------------- Markdown


def _markdown(session: _Session) -> str:
    out = [f"# {session.title}", ""]
    out += [f"- {name}: {value}" for name, value in session.facts]
    out += _markdown_parts(session.parts)
    out += ["", "---", "", f"Usage: {_usage_line(session)}", ""]
    return "\n".join(out)


def _markdown_parts(parts: list[_Part]) -> list[str]:
    out: list[str] = []
    for part in parts:
        out.append("")
        match part:
            case _Said():
                out += [f"## {part.who.capitalize()}", "", part.words.strip()]
                for attachment in part.attachments:
                    out += ["", f"**{_attached(attachment)}**"]
                    out += ["", _fence(attachment.text)] if attachment.text else []
            case _Answer():
                if part.thinking:
                    quoted = f"Thinking: {part.thinking}".split("\n")
                    out += [f"> {line}".rstrip() for line in quoted]
                    out.append("")
                if part.text:
                    out.append(part.text)
            case _Call():
                state = _STATE[part.status]
                out += [f"**{_GLYPH[part.status]} `{part.title}`** ({state})"]
                if part.command is None:
                    out += ["", _fence(_pretty(part.arguments), "json")]
                if part.diff:
                    out += ["", _fence(part.diff, "diff")]
                elif part.output.strip():
                    out += ["", _fence(part.output)]
                if part.child is not None:
                    nested = ["**Sub-agent transcript**", *_markdown_parts(part.child)]
                    out += [""] + [f"> {line}".rstrip() for line in nested]
            case _Marker():
                out.append(f"> **{part.text}**")
    return out


# ---------------------------------------------------------------- HTML

_CSS = """
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;
color:#1d1f21;background:#fdfdfd}
h1{font-size:1.4rem}.facts{color:#666;font-size:.9rem}
.prompt,.steer,.notification{border-left:4px solid #3b82f6;background:#eef4ff;padding:.5rem 1rem;
margin:1.5rem 0 .5rem;white-space:pre-wrap}
.steer{border-color:#a855f7;background:#f5efff}.notification{border-color:#999;background:#f3f3f3}
.answer{margin:.5rem 0}.answer table,.thinking table{border-collapse:collapse}
.answer th,.answer td{border:1px solid #ddd;padding:.2rem .5rem}
code{font:13px/1.4 ui-monospace,monospace;background:#f6f8fa;padding:0 .2rem}pre code{padding:0}
details{color:#555;margin:.5rem 0}.thinking{font-style:italic}
.call{border:1px solid #ddd;border-radius:6px;margin:.5rem 0;padding:.25rem .75rem}
.call .head{font-family:ui-monospace,monospace}.failed .head{color:#b91c1c}
.aborted .head,.denied .head{color:#92400e}
pre{background:#f6f8fa;padding:.5rem;overflow-x:auto;font:13px/1.4 ui-monospace,monospace}
.add{color:#166534;background:#dcfce7}.del{color:#991b1b;background:#fee2e2}.hunk{color:#6b21a8}
.marker{font-weight:bold;margin:.75rem 0}.marker.error{color:#b91c1c}
.marker.interrupted,.marker.stopped,.marker.warning,.marker.retry{color:#92400e}
.image{display:block;max-width:100%;max-height:32rem;margin:.5rem 0;border:1px solid #ddd}
.usage{border-top:1px solid #ddd;margin-top:2rem;padding-top:.5rem;color:#666}
"""


def _diff_html(diff: str) -> str:
    lines = []
    for line in diff.rstrip("\n").split("\n"):
        css = ""
        if line.startswith("@@"):
            css = "hunk"
        elif line.startswith("+") and not line.startswith("+++"):
            css = "add"
        elif line.startswith("-") and not line.startswith("---"):
            css = "del"
        text = html.escape(line)
        lines.append(f'<span class="{css}">{text}</span>' if css else text)
    return "<pre>" + "\n".join(lines) + "</pre>"


def _html(session: _Session) -> str:
    e = html.escape
    body = [f"<h1>{e(session.title)}</h1>", '<div class="facts">']
    body += [f"<div>{e(name)}: {e(value)}</div>" for name, value in session.facts]
    body.append("</div>")
    body += _html_parts(session.parts)
    body.append(f'<div class="usage">Usage: {e(_usage_line(session))}</div>')
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{e(session.title)}</title><style>{_CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _image_html(image: ImagePart) -> str:
    """An image as a data URL: the page stays one file that fetches nothing. Only the image
    types a prompt can carry are shown (an SVG could hold script); base64 is checked."""
    if image.media_type not in IMAGE_TYPES.values() or not _BASE64.fullmatch(image.data):
        return f'<div class="attached">{html.escape(image.media_type)} image (not shown)</div>'
    source = f"data:{image.media_type};base64,{image.data}"
    return f'<img class="image" alt="attached image" src="{source}">'


_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def _html_parts(parts: list[_Part]) -> list[str]:
    e = html.escape
    body: list[str] = []
    for part in parts:
        match part:
            case _Said():
                body.append(f'<div class="{part.who}">{e(part.words.strip())}</div>')
                body += [_image_html(image) for image in part.images]
                for attachment in part.attachments:
                    if not attachment.text:
                        body.append(f'<div class="attached">{e(_attached(attachment))}</div>')
                        continue
                    body.append(
                        f'<details class="attached"><summary>{e(_attached(attachment))}</summary>'
                        f"<pre>{e(attachment.text.rstrip())}</pre></details>"
                    )
            case _Answer():
                if part.thinking:
                    body.append(
                        '<details><summary>Thinking</summary><div class="thinking">'
                        f"{_RENDER.render(part.thinking)}</div></details>"
                    )
                if part.text:
                    body.append(f'<div class="answer">{_RENDER.render(part.text)}</div>')
            case _Call():
                head = f"{_GLYPH[part.status]} {e(part.title)} ({_STATE[part.status]})"
                body.append(f'<div class="call {part.status or ""}">')
                body.append(f'<div class="head">{head}</div>')
                if part.command is None:
                    body.append(f"<pre>{e(_pretty(part.arguments))}</pre>")
                if part.diff:
                    body.append(_diff_html(part.diff))
                elif part.output.strip():
                    body.append(f"<pre>{e(part.output.rstrip())}</pre>")
                if part.child is not None:
                    body.append("<details><summary>Sub-agent transcript</summary>")
                    body += _html_parts(part.child)
                    body.append("</details>")
                body.append("</div>")
            case _Marker():
                body.append(f'<div class="marker {part.kind}">{e(part.text)}</div>')
    return body


# ---------------------------------------------------------------- entry point


def export_file(
    session_id: str, fmt: ExportFormat, path: Path, *, branch: int | None = None
) -> Path:
    """Write the session `session_id` (its branch number `branch`, by default the one it is on)
    to `path` (what /export does); returns the path written. Raises `ValueError` for an
    unknown session or branch, `OSError` when the file cannot be written."""
    session = Session.open(session_id)
    if session is None:
        raise ValueError(f"no session {session_id!r}")
    records = on_branch(read_log(session.events_path), branch)
    path.write_text(export_session(records, fmt, session.dir / "tasks"), encoding="utf-8")
    return path


def export_session(records: list[Record], fmt: ExportFormat, tasks: Path | None = None) -> str:
    """The session whose log holds `records`, in format `fmt`; with `tasks` (the folder of
    its sub-agents' logs), each `task` call shows its sub-agent's transcript."""
    session, events = _collect(records, tasks)
    if fmt == "jsonl":
        return "".join(event.model_dump_json() + "\n" for event in events)
    if fmt == "html":
        return _html(session)
    return _markdown(session)
