"""Draw the three machines from the code: `python -m tui_agent.kernel.diagrams OUT_DIR`.

Writes `{agent,turn,tool}.dot` (normalised, so the text is deterministic and a test can
compare it with the committed copy) and, when Graphviz `dot` is installed, `.svg` beside it.
python-statemachine's DOT embeds `id()`s of its subgraphs (`__initial_<n>`, `___atomic_<n>`);
they are renumbered in order of first appearance.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tui_agent.kernel.agent import AgentMachine
from tui_agent.kernel.chart import KernelChart
from tui_agent.kernel.tool import ToolMachine
from tui_agent.kernel.turn import TurnMachine

MACHINES: dict[str, type[KernelChart]] = {
    "agent": AgentMachine,
    "turn": TurnMachine,
    "tool": ToolMachine,
}

_GENERATED_ID = re.compile(r"(__initial_|___atomic_)(\d+)")


def normalize_dot(dot: str) -> str:
    ids: dict[str, int] = {}
    return _GENERATED_ID.sub(lambda m: m.group(1) + str(ids.setdefault(m.group(2), len(ids))), dot)


def dot_source(machine: type[KernelChart]) -> str:
    source = normalize_dot(format(machine, "dot"))
    return source if source.endswith("\n") else source + "\n"


def write_diagrams(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    graphviz = shutil.which("dot")
    written: list[Path] = []
    for name, machine in MACHINES.items():
        dot_path = out_dir / f"{name}.dot"
        source = dot_source(machine)
        dot_path.write_text(source, encoding="utf-8")
        written.append(dot_path)
        if graphviz is not None:
            svg = subprocess.run(
                [graphviz, "-Tsvg"], input=source.encode(), capture_output=True, check=True
            ).stdout
            svg_path = out_dir / f"{name}.svg"
            svg_path.write_bytes(svg)
            written.append(svg_path)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out_dir = Path(args[0]) if args else Path("docs/machines")
    for path in write_diagrams(out_dir):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
