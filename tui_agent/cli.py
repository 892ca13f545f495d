"""Entry points: the full-screen TUI and the headless print mode (filled in by the loop issue)."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    print("tui-agent: not built yet")
    return 2
