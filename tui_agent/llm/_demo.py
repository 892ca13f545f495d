"""The built-in offline demo: a small dynamic script that walks a newcomer through a session.

It is what the app runs when no API key is configured. Each answer is written from the request
it gets, so it works in any folder and after a resume: it reads the tool results already in
the history to decide the next step.

1. a friendly intro, then `glob` with pattern `*`;
2. `read_file` on a README (or else the first text-like file) from the listing;
3. `grep` for a distinctive word from that file (or "TODO");
4. `write_file` of a harmless notes file summarising what it saw (ask mode asks first, and a
   denial is answered gracefully in the next step);
5. the keys worth knowing, and how to switch to a real model.

Later prompts get a short demo answer that runs one `shell` `ls`, then says what a real model
would do. Tool names and arguments are the ones in docs/ARCHITECTURE.md.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections import Counter

from tui_agent.lazy_dataclass import dataclass
from tui_agent.llm._scripted import ScriptStep, ScriptToolCall
from tui_agent.vocab import LLMRequest, Message

NOTES_FILE = "NOTES-tui-agent-demo.md"

_TEXT_SUFFIXES = (
    ".md",
    ".txt",
    ".rst",
    ".py",
    ".toml",
    ".cfg",
    ".ini",
    ".json",
    ".yaml",
    ".yml",
    ".js",
    ".ts",
    ".tsx",
    ".rs",
    ".go",
    ".java",
    ".c",
    ".h",
    ".cpp",
    ".rb",
    ".sh",
    ".html",
    ".css",
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{4,}")
_COMMON = frozenset(
    (
        "about",
        "after",
        "again",
        "being",
        "below",
        "class",
        "could",
        "def",
        "every",
        "false",
        "first",
        "from",
        "have",
        "import",
        "into",
        "just",
        "like",
        "more",
        "most",
        "none",
        "other",
        "over",
        "return",
        "self",
        "should",
        "since",
        "some",
        "such",
        "than",
        "that",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "true",
        "under",
        "until",
        "using",
        "what",
        "when",
        "where",
        "which",
        "while",
        "with",
        "would",
        "your",
        "yours",
    )
)

_KEYS = """\
A few keys worth knowing:
- **Enter** sends your prompt; while a turn runs, Enter queues the text as the next turn.
- **Ctrl+S** steers: the text joins the running turn at its next step.
- **Esc** cancels the running turn (press it again to force); **Ctrl+C** cancels too, and \
twice within 2 s quits.
- **/help** lists the commands."""

_REAL_MODEL = """\
This is the **offline demo**: every answer here comes from a built-in script, not a model. \
To talk to a real model, set `OPENAI_API_KEY` (any OpenAI-compatible server works; add \
`OPENAI_BASE_URL` for Ollama, vLLM, DeepSeek, ...) or `ANTHROPIC_API_KEY`, then start \
tui-agent again (or pass `--provider`, `--model` and `--base-url`)."""


@dataclass(frozen=True)
class _Exchange:
    """One tool call of the history and its result (None while unanswered)."""

    name: str
    arguments: dict[str, object]
    result: Message | None


def _exchanges(request: LLMRequest) -> list[_Exchange]:
    results = {m.tool_call_id: m for m in request.messages if m.role == "tool"}
    out: list[_Exchange] = []
    for message in request.messages:
        for call in message.tool_calls:
            try:
                arguments = json.loads(call.arguments or "{}")
            except ValueError:
                arguments = {}
            out.append(
                _Exchange(
                    call.name,
                    arguments if isinstance(arguments, dict) else {},
                    results.get(call.id),
                )
            )
    return out


def _step(text: str, *calls: tuple[str, dict[str, object]], thinking: str = "") -> ScriptStep:
    return ScriptStep(
        text=text,
        thinking=thinking,
        tool_calls=tuple(ScriptToolCall(name=n, arguments=json.dumps(a)) for n, a in calls),
    )


def _listed_paths(result: Message | None) -> list[str]:
    if result is None or result.is_error:
        return []
    paths = []
    for line in result.text.splitlines():
        entry = line.strip()
        # The glob tool's own remarks: "No files match ..." and "[12 more files not shown ...]".
        if entry and not entry.startswith(("[", "No files match")):
            paths.append(entry)
    return paths


def _pick_file(paths: list[str]) -> str | None:
    files = [p for p in paths if not p.endswith("/")]
    for path in files:
        if os.path.basename(path).lower().startswith("readme"):
            return path
    for path in files:
        if path.lower().endswith(_TEXT_SUFFIXES) and path != NOTES_FILE:
            return path
    return None


def _workspace_files(workspace: str | None) -> list[str]:
    if not workspace or not os.path.isdir(workspace):
        return []
    with os.scandir(workspace) as entries:
        return sorted(e.name for e in entries if e.is_file() and not e.name.startswith("."))


def _pick_word(result: Message | None) -> str:
    if result is None or result.is_error:
        return "TODO"
    counts = Counter(w for w in _WORD.findall(result.text) if w.lower() not in _COMMON)
    if not counts:
        return "TODO"
    word: str = counts.most_common(1)[0][0]
    return word


_GREP_HIT = re.compile(r"^.+:\d+:")


def _match_count(result: Message | None) -> int:
    if result is None or result.is_error:
        return 0
    return sum(1 for line in result.text.splitlines() if _GREP_HIT.match(line))


class DemoScript:
    """Writes each demo answer from the request: the step author behind the offline demo."""

    def __init__(self, workspace: str | None = None, chunk_delay_s: float = 0.01) -> None:
        self.workspace = workspace
        self.chunk_delay_s = chunk_delay_s

    def __call__(self, request: LLMRequest) -> ScriptStep:
        return dataclasses.replace(self._answer(request), chunk_delay_s=self.chunk_delay_s)

    def _answer(self, request: LLMRequest) -> ScriptStep:
        exchanges = _exchanges(request)
        last = request.messages[-1] if request.messages else None
        if last is None or last.role != "tool":
            if not exchanges:
                return self._intro()
            return self._later_prompt(last)
        finished = [e for e in exchanges if e.result is not None]
        latest = finished[-1] if finished else None
        if latest is None:
            return self._intro()
        by_name = {e.name: e for e in finished}
        if latest.name == "glob":
            return self._read(latest)
        if latest.name == "read_file":
            return self._search(latest)
        if latest.name == "grep":
            return self._propose_edit(by_name)
        if latest.name == "write_file":
            return self._wrap_up(latest)
        return self._after_shell(latest)

    def _intro(self) -> ScriptStep:
        where = f" in `{self.workspace}`" if self.workspace else ""
        return _step(
            "Hi! I'm **tui-agent**, running the **offline demo**: no API key is configured, "
            "so a small built-in script plays the model's part. I'll walk you through a real "
            f"session{where}: list the files, read one, search for a word, and propose a small "
            "edit you can approve or decline.\n\nFirst, let me see what's here.",
            ("glob", {"pattern": "*"}),
        )

    def _read(self, listing: _Exchange) -> ScriptStep:
        paths = _listed_paths(listing.result) or _workspace_files(self.workspace)
        chosen = _pick_file(paths)
        if chosen is None:
            return self._propose_edit({})
        why = (
            "a README is the best place to start"
            if "readme" in chosen.lower()
            else ("there is no README, so the first text file will do")
        )
        return _step(
            f"The folder has {len(paths)} entries. Let me read `{chosen}`.",
            ("read_file", {"path": chosen}),
            thinking=f"The listing shows {len(paths)} entries; {why}.",
        )

    def _search(self, reading: _Exchange) -> ScriptStep:
        word = _pick_word(reading.result)
        source = reading.arguments.get("path", "the file")
        return _step(
            f"`{source}` mentions **{word}** more than anything else. Let me search the "
            "whole folder for it: tools run in the background and their output streams in.",
            ("grep", {"pattern": word}),
        )

    def _propose_edit(self, seen: dict[str, _Exchange]) -> ScriptStep:
        listing, reading, search = seen.get("glob"), seen.get("read_file"), seen.get("grep")
        lines = ["# Notes from the tui-agent demo", ""]
        if listing is not None:
            count = len(_listed_paths(listing.result))
            lines.append(f"- The folder listing showed {count} entries.")
        if reading is not None:
            lines.append(f"- I read `{reading.arguments.get('path', '?')}`.")
        if search is not None:
            pattern = search.arguments.get("pattern", "?")
            lines.append(f"- Searching for `{pattern}` gave {_match_count(search.result)} lines.")
        lines += ["", "This file was written by the offline demo; delete it whenever you like."]
        return _step(
            "Now an edit. I'd like to write a small notes file, "
            f"`{NOTES_FILE}`, summarising what I saw. In ask mode you'll be asked to approve "
            "it first: try approving or declining, either is fine.",
            ("write_file", {"path": NOTES_FILE, "content": "\n".join(lines) + "\n"}),
        )

    def _wrap_up(self, edit: _Exchange) -> ScriptStep:
        if edit.result is not None and edit.result.is_error:
            outcome = (
                "The edit was declined (or could not be made), so nothing was written. That's "
                "fine: a denied tool call is just another result, and the agent carries on."
            )
        else:
            outcome = f"Done: `{NOTES_FILE}` is written. Open it, or delete it whenever you like."
        return _step(f"{outcome}\n\nThat's the tour. {_KEYS}\n\n{_REAL_MODEL}")

    def _later_prompt(self, prompt: Message | None) -> ScriptStep:
        asked = prompt.text.strip() if prompt is not None else ""
        quoted = f" about “{asked[:80]}”" if asked else ""
        return _step(
            f"I'm only the offline demo, so I can't really think{quoted}. A real model would "
            "read the relevant files, make a plan and call tools step by step. To show a tool "
            "at work, I'll list the folder with the shell.",
            ("shell", {"command": "ls"}),
        )

    def _after_shell(self, run: _Exchange) -> ScriptStep:
        if run.result is None or run.result.is_error:
            seen = "The command did not run (declined or failed), which is handled like any result."
        else:
            count = sum(1 for line in run.result.text.splitlines() if line.strip())
            seen = f"The shell printed {count} lines."
        return _step(f"{seen}\n\n{_REAL_MODEL}")
