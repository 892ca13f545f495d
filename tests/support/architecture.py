"""Draw the README's Architecture pictures from the code: `python -m tests.support.architecture`.

Two Mermaid pictures, written into README.md between `<!-- architecture:NAME -->` markers (the
README shows them; `tests/test_architecture_pictures.py` fails when they no longer match the
code, like the machine diagrams; `make diagrams` redraws them):

- `layers`: the layers of import-linter's layer contract in `pyproject.toml`, top to bottom, and
  every import between two packages that the code really makes (from grimp, import-linter's own
  import graph), so a new dependency shows up as a new arrow.
- `prompt`: one prompt's path. A headless run (`tui-agent -p`) with the scripted provider, whose
  first step reads a file and whose second answers, is traced (after an untraced run, so that
  imports are not counted as calls): each package is drawn in the order the run first calls into
  it, with the modules whose functions it called there. `vocab`, which every layer uses, is left
  out.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from io import StringIO
from pathlib import Path
from types import FrameType
from typing import Any

import grimp

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PACKAGE = "tui_agent"
_BLOCK = re.compile(r"(<!-- architecture:(\w+) -->\n)(.*?)(<!-- /architecture -->)", re.DOTALL)


def _layers() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [contract] = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [[name.strip() for name in layer.split("|")] for layer in contract["layers"]]


def _short(module: str) -> str:
    return module.removeprefix(f"{PACKAGE}.")


def _node(module: str) -> str:
    return _short(module).replace(".", "_")


def layers_picture() -> str:
    layers = _layers()
    top = {name: name for layer in layers for name in layer}
    graph = grimp.build_graph(PACKAGE)
    edges: set[tuple[str, str]] = set()
    for module in graph.modules:
        source = _owner(module, top)
        for imported in graph.find_modules_directly_imported_by(module):
            target = _owner(imported, top)
            if source and target and source != target:
                edges.add((source, target))
    lines = ["```mermaid", "flowchart TB"]
    for index, layer in enumerate(layers):
        lines.append(f'  subgraph L{index}[" "]')
        lines.extend(f"    {_node(name)}[{_short(name)}]" for name in layer)
        lines.append("  end")
    lines.extend(f"  {_node(a)} --> {_node(b)}" for a, b in sorted(edges))
    lines.append("```")
    return "\n".join(lines) + "\n"


def _owner(module: str, top: dict[str, str]) -> str | None:
    """The layer package a module belongs to (its longest listed prefix)."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[:end])
        if name in top:
            return name
    return None


READ = {"name": "read_file", "arguments": {"path": "a.txt"}}
SCRIPT = {
    "steps": [
        {"text": "Let me look.", "tool_calls": [READ], "chunk_delay_s": 0},
        {"text": "It says alpha.", "chunk_delay_s": 0},
    ]
}


@contextmanager
def _traced(calls: list[tuple[str, str]]) -> Iterator[None]:
    """Records each (caller module, called module) of ours, once, in the order first made."""
    seen: set[tuple[str, str]] = set()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame.f_code.co_name == "<module>" or frame.f_back is None:
            return
        callee = frame.f_globals.get("__name__", "")
        caller = frame.f_back.f_globals.get("__name__", "")
        pair = (caller, callee)
        if pair not in seen and callee.startswith(f"{PACKAGE}.") and caller.startswith(PACKAGE):
            seen.add(pair)
            calls.append(pair)

    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(None)


def traced_prompt() -> list[tuple[str, str]]:
    """Which module of ours calls which during a headless prompt, in the order first made."""
    _run_prompt([])  # loads every module the run needs, so the traced run sees calls only
    calls: list[tuple[str, str]] = []
    _run_prompt(calls)
    return calls


def _run_prompt(calls: list[tuple[str, str]]) -> None:
    from tui_agent.cli import main

    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        workspace = base / "ws"
        workspace.mkdir()
        (workspace / "a.txt").write_text("alpha\n")
        script = base / "script.json"
        script.write_text(json.dumps(SCRIPT))
        argv = ["-p", "What does a.txt say?", "--provider", "scripted", "--script", str(script)]
        argv += ["--workspace", str(workspace), "--yolo"]
        old_home = os.environ.get("TUI_AGENT_HOME")
        os.environ["TUI_AGENT_HOME"] = str(base / "home")
        try:
            with redirect_stdout(StringIO()), _traced(calls):
                code = main(argv)
        finally:
            if old_home is None:
                del os.environ["TUI_AGENT_HOME"]
            else:
                os.environ["TUI_AGENT_HOME"] = old_home
        assert code == 0, f"the traced run failed ({code})"


def _group(module: str) -> str:
    parts = _short(module).split(".")
    return ".".join(parts[:2]) if parts[:2] == ["loop", "adapters"] else parts[0]


def prompt_picture(calls: list[tuple[str, str]]) -> str:
    """The packages the prompt crosses and the calls between them, numbered in the order each
    was first made (calls scheduled by asyncio, whose caller is the event loop, are not drawn)."""
    edges: list[tuple[str, str]] = []
    for caller, callee in calls:
        edge = (_group(caller), _group(callee))
        if edge[0] != edge[1] and "vocab" not in edge and edge not in edges:
            edges.append(edge)
    lines = ["```mermaid", "flowchart LR"]
    lines.extend(
        f"  {a.replace('.', '_')}[{a}] -->|{n}| {b.replace('.', '_')}[{b}]"
        for n, (a, b) in enumerate(edges, 1)
    )
    lines.append("```")
    return "\n".join(lines) + "\n"


def pictures() -> dict[str, str]:
    return {"layers": layers_picture(), "prompt": prompt_picture(traced_prompt())}


def readme_blocks(text: str) -> dict[str, str]:
    return {match.group(2): match.group(3) for match in _BLOCK.finditer(text)}


def write_readme(drawn: dict[str, str]) -> None:
    text = README.read_text(encoding="utf-8")
    README.write_text(
        _BLOCK.sub(lambda m: m.group(1) + drawn[m.group(2)] + m.group(4), text), encoding="utf-8"
    )


if __name__ == "__main__":
    write_readme(pictures())
