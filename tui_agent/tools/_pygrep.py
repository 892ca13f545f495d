"""Our own line search in Python: what `grep` uses when there is no `rg` binary.

`search` walks the tree as git sees it and matches each line with Python's `re`. `Found`
collects matches the same way for both engines (sorted input, the first `MAX_GREP_MATCHES`
kept, lines cut at `MAX_GREP_LINE`, totals counted), and `shown_path` escapes file names that
are not UTF-8 (`caf\\xe9.txt`) so they can travel in a request. Python's `re` can backtrack for
ever, so the tool never calls `search` in its own process: it runs this module as a worker
(`WORKER + [SECONDS]` runs `main`: the query as JSON on stdin, the result as JSON on
stdout) that it can kill, and that kills itself after SECONDS of CPU should the agent be gone.
"""

from __future__ import annotations

import json
import math
import os
import re
import resource
import stat
import sys
from collections.abc import Callable
from dataclasses import asdict, field

from tui_agent.lazy_dataclass import dataclass
from tui_agent.tools._walk import glob_regex, walk_files

MAX_GREP_MATCHES = 250
MAX_GREP_LINE = 400
MAX_GREP_FILE_BYTES = 20_000_000
_SNIFF = 8_192
# -I: the workspace (the worker's folder) never shadows our modules, nor does PYTHONPATH. The
# worker needs this module and `_walk` only: its packages are stood in for by empty ones, so a
# search does not pay for importing every tool (`tui_agent.tools`' own `__init__`).
_PACKAGES = (
    ("tui_agent", os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    ("tui_agent.tools", os.path.dirname(os.path.abspath(__file__))),
)
WORKER = (
    sys.executable,
    "-I",
    "-c",
    "import sys, types\n"
    f"for name, path in {_PACKAGES!r}:\n"
    "    sys.modules[name] = package = types.ModuleType(name)\n"
    "    package.__path__ = [path]\n"
    "from tui_agent.tools._pygrep import main; main()",
)


def shown_path(name: str) -> str:
    """A path as text that is always valid UTF-8: undecodable bytes become `\\xNN`."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _glob_filter(pattern: str) -> re.Pattern[str]:
    if "/" in pattern:
        return re.compile(glob_regex(pattern.lstrip("/").removeprefix("./")))
    return re.compile("(?:.*/)?" + glob_regex(pattern))  # no slash: the name, in any folder


@dataclass
class Found:
    lines: list[str] = field(default_factory=list)
    total: int = 0
    files: int = 0
    skipped_large: int = 0

    def add(self, shown: str, number: int, line: str) -> None:
        self.total += 1
        if len(self.lines) < MAX_GREP_MATCHES:
            if len(line) > MAX_GREP_LINE:
                line = line[:MAX_GREP_LINE] + "..."
            self.lines.append(f"{shown}:{number}:{line}")


@dataclass(frozen=True)
class Query:
    root: str  # the workspace root (real path)
    top: str  # the file or folder searched (real path, inside root)
    top_shown: str  # `top` as the model named it relative to root ("." for the root)
    pattern: str
    ignore_case: bool = False
    glob: str | None = None
    top_is_file: bool = False

    def wanted(self) -> Callable[[str], bool]:
        """Whether a file (its path relative to the root) passes the `glob` argument, which
        speaks of paths below the searched folder."""
        if self.glob is None:
            return lambda rel: True
        matcher = _glob_filter(self.glob)
        strip = 0 if self.top_shown == "." or self.top_is_file else len(self.top_shown) + 1
        return lambda rel: matcher.fullmatch(rel[strip:] or os.path.basename(rel)) is not None


def search(query: Query, should_stop: Callable[[], bool] = lambda: False) -> Found:
    flags = re.IGNORECASE if query.ignore_case else 0
    line_rx = re.compile(query.pattern, flags)
    # Whole-file prefilter: skips most files without splitting them into lines. \A and \Z
    # mean something else on a whole file, so such patterns go line by line only.
    whole_rx = (
        None
        if re.search(r"\\[AZz]", query.pattern)
        else re.compile(query.pattern, flags | re.MULTILINE)
    )
    wanted = query.wanted()
    found = Found()
    files = (
        [(query.top, query.top_shown)]
        if query.top_is_file
        else walk_files(query.top, query.root, should_stop)
    )
    for absolute, rel in files:
        if should_stop():
            break
        if not wanted(rel):
            continue
        text = _text(absolute, found)
        if text is None or (whole_rx is not None and whole_rx.search(text) is None):
            continue
        before = found.total
        for number, line in enumerate(text.split("\n"), 1):
            if line_rx.search(line) is not None:
                found.add(shown_path(rel), number, line)
        found.files += found.total > before
    return found


def _text(path: str, found: Found) -> str | None:
    """A file's text, or None for what is not searched (binary, special, unreadable, huge)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with open(fd, "rb", buffering=0) as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # a FIFO swapped in after the walk
            return None
        if info.st_size > MAX_GREP_FILE_BYTES:
            found.skipped_large += 1
            return None
        data = handle.readall()
    if b"\x00" in data[:_SNIFF]:
        return None
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")  # CRLF lines as LF
    return text[:-1] if text.endswith("\n") else text


def main() -> None:
    if len(sys.argv) > 1:  # a CPU budget of our own: a runaway search ends even if the agent died
        seconds = math.ceil(float(sys.argv[1]))
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))  # SIGXCPU, then SIGKILL
    query = Query(**json.loads(sys.stdin.buffer.read()))
    sys.stdout.write(json.dumps(asdict(search(query))) + "\n")
